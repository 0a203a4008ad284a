// The full rules: docs/RULES.md (shipped as /web/rules.md), or at /rules/all-fives
// docs/ALLFIVES.md (as /web/allfives.md), drawn from their few Markdown forms (headings, list
// items, paragraphs, **bold**, *emphasis*, `code`; a line of an HTML comment is left out) as
// text, never as HTML.
import {byId, el, put} from "./dom.js";

const INLINE = /(\*\*[^*]+\*\*|\*[^*]+\*|`[^`]+`)/;  // the leftmost wins: *a `b`* is em

function inline(text) {
  return text.split(INLINE).filter(Boolean).map((part) => {
    if (part.startsWith("**")) return el("strong", {}, part.slice(2, -2));
    if (part.startsWith("`")) return el("code", {}, part.slice(1, -1));
    if (part.startsWith("*") && part.length > 2) return el("em", {}, ...inline(part.slice(1, -1)));
    return part;
  });
}

/** The blocks of a Markdown text: a heading, a list item or a paragraph each (a line that
 * is indented or follows text without a blank line continues the block before it). */
function blocks(markdown) {
  const found = [];
  for (const line of markdown.split("\n")) {
    const heading = /^(#{1,3}) (.*)/.exec(line), item = /^- (.*)/.exec(line);
    if (/^<!--.*-->$/.test(line.trim())) continue;
    if (heading) found.push({tag: `h${heading[1].length}`, text: heading[2]});
    else if (item) found.push({tag: "li", text: item[1]});
    else if (!line.trim()) found.push(null);
    else if (found.length && found.at(-1) && !found.at(-1).tag.startsWith("h")) found.at(-1).text += ` ${line.trim()}`;
    else found.push({tag: "p", text: line.trim()});
  }
  return found.filter(Boolean);
}

async function start() {
  const file = location.pathname === "/rules/all-fives" ? "/web/allfives.md" : "/web/rules.md";
  for (const link of document.querySelectorAll("a.plain")) link.href = file;
  const answer = await fetch(file);
  const nodes = [];
  for (const block of blocks(await answer.text())) {
    if (block.tag === "li") {
      if (nodes.at(-1)?.tagName !== "UL") nodes.push(el("ul"));
      nodes.at(-1).append(el("li", {}, ...inline(block.text)));
    } else nodes.push(el(block.tag, {}, ...inline(block.text)));
  }
  put(byId("rulebook"), ...nodes);
}

start();
