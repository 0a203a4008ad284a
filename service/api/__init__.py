"""The HTTP API: the Flask app (`app.create_app`), its routes, schemas and problem+json."""
