// Oracle for long-run counting: node's JSON.stringify and node's own regex engine (V8) cutting the
// canonical string with the o200k_base pre-tokenizer pattern (as js-tiktoken ships it).
//
// One request per line on stdin: base64 of the UTF-8 of a JSON text. One answer per line:
// "ok <base64 of the UTF-8 of a JSON array: [canonical, [piece lengths in UTF-16 units]]>"
// or "err <base64 of the message>".
"use strict";
const readline = require("readline");

const CONTRACTION = "('s|'S|'t|'T|'re|'rE|'Re|'RE|'ve|'vE|'Ve|'VE|'m|'M|'ll|'lL|'Ll|'LL|'d|'D)?";
const PATTERN = [
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]*[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]+" + CONTRACTION,
  "[^\\r\\n\\p{L}\\p{N}]?[\\p{Lu}\\p{Lt}\\p{Lm}\\p{Lo}\\p{M}]+[\\p{Ll}\\p{Lm}\\p{Lo}\\p{M}]*" + CONTRACTION,
  "\\p{N}{1,3}",
  " ?[^\\s\\p{L}\\p{N}]+[\\r\\n/]*",
  "\\s*[\\r\\n]+",
  "\\s+(?!\\S)",
  "\\s+",
].join("|");

const rl = readline.createInterface({ input: process.stdin, terminal: false });
rl.on("line", (line) => {
  let answer;
  try {
    const canonical = JSON.stringify(JSON.parse(Buffer.from(line, "base64").toString("utf8")));
    const lengths = [];
    for (const m of canonical.matchAll(new RegExp(PATTERN, "gu"))) lengths.push(m[0].length);
    answer = "ok " + Buffer.from(JSON.stringify([canonical, lengths]), "utf8").toString("base64");
  } catch (err) {
    answer = "err " + Buffer.from(String(err && err.message), "utf8").toString("base64");
  }
  process.stdout.write(answer + "\n");
});
