// Building DOM nodes without HTML strings: attributes are set one by one, text is text.
const SVG = "http://www.w3.org/2000/svg";

function fill(node, attrs, children) {
  for (const [name, value] of Object.entries(attrs || {})) {
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (value === true) node.setAttribute(name, "");
    else if (value !== false && value !== null && value !== undefined) node.setAttribute(name, value);
  }
  for (const child of children.flat()) {
    if (child !== null && child !== undefined && child !== false) {
      node.append(child instanceof Node ? child : String(child));
    }
  }
  return node;
}

/** An HTML element with attributes (`onclick`: a listener) and children (nodes or text). */
export function el(tag, attrs, ...children) {
  return fill(document.createElement(tag), attrs, children);
}

/** An SVG element, likewise. */
export function svg(tag, attrs, ...children) {
  return fill(document.createElementNS(SVG, tag), attrs, children);
}

/** The element with this id. */
export function byId(id) {
  return document.getElementById(id);
}

/** Replace the children of `node` with `children`. */
export function put(node, ...children) {
  node.replaceChildren();
  return fill(node, {}, children);
}

/** Resolve after `ms` milliseconds. */
export function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}
