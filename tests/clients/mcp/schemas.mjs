// Validates the tools/list answer of an MCP server (JSON on stdin, as the MCP Inspector's CLI
// prints it): every inputSchema compiles as JSON Schema 2020-12 (MCP 2025-11-25's default dialect)
// under Ajv's strict mode, is an object schema, and accepts an argument object made of its
// required properties' example values given on the command line (NAME=JSON ...), and refuses one
// with an unknown property. Prints one line per tool; exit 1 on any failure.
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
const require = createRequire(import.meta.url);
const Ajv2020 = require("ajv/dist/2020").default;
const ajv = new Ajv2020({ strict: true, allErrors: true });
const examples = Object.fromEntries(process.argv.slice(2).map((a) => [a.split("=")[0], JSON.parse(a.slice(a.indexOf("=") + 1))]));
const { tools } = JSON.parse(readFileSync(0, "utf8"));
let failed = 0;
for (const t of tools) {
  try {
    const validate = ajv.compile(t.inputSchema);
    if (t.inputSchema.type !== "object") throw new Error("not an object schema");
    const args = {};
    for (const r of t.inputSchema.required || []) args[r] = examples[r] ?? "x";
    if (!validate(args)) throw new Error("refuses " + JSON.stringify(args) + ": " + ajv.errorsText(validate.errors));
    if (validate({ ...args, no_such_argument: 1 })) throw new Error("accepts an unknown argument");
    console.log(`${t.name}: schema valid`);
  } catch (e) {
    console.error(`FAIL: ${t.name}: ${e.message}`);
    failed++;
  }
}
process.exit(failed ? 1 : 0);
