"""Harnesses that play whole matches through the real commands, for the tests and the benches.

`selfplay`: random matches with the invariants checked at every step (`play_random_match`,
`sweep`, `Checker`). `arena`: matches between AI players, each seeing only its seat's view
(`play_ai_match`). Nothing shipped (`service`, `workers`) imports them.
"""
