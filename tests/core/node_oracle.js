// The JSON oracle for the canonical-form tests: node's own JSON.parse / JSON.stringify.
//
// Protocol, one request per line on stdin, one answer per line on stdout:
//   request:  "<mode> <base64 of the UTF-8 of a JSON text>"
//             mode "c" = JSON.stringify(JSON.parse(text));
//             mode an integer N = JSON.stringify(JSON.parse(text), null, N)
//   answer:   "ok <base64 of the UTF-8 of the result>"   (always well-formed: ES2019 escapes
//             lone surrogates, so UTF-8 is lossless)
//             "err <base64 of the UTF-8 of the error message>"
// Lone surrogates must reach JSON.parse as \uXXXX escapes in the text (raw ones would not survive
// UTF-8 on the way in).
"use strict";
const readline = require("readline");

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on("line", (line) => {
  const space = line.indexOf(" ");
  const mode = line.slice(0, space);
  const text = Buffer.from(line.slice(space + 1), "base64").toString("utf8");
  let answer;
  try {
    const value = JSON.parse(text);
    const out = mode === "c" ? JSON.stringify(value) : JSON.stringify(value, null, Number(mode));
    answer = "ok " + Buffer.from(out === undefined ? "undefined" : out, "utf8").toString("base64");
  } catch (err) {
    answer = "err " + Buffer.from(String(err && err.message), "utf8").toString("base64");
  }
  process.stdout.write(answer + "\n");
});
