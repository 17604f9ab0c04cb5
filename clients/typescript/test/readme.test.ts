/**
 * The README's example, run as written (`readme.example.ts` is the README's code block: a
 * Python test holds the two equal): what it prints is what the README says it prints.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

test("the README's example runs and prints what it says", async () => {
  const printed: string[] = [];
  const log = console.log;
  console.log = (...values: unknown[]) => printed.push(values.map(String).join(" "));
  try {
    await import("./readme.example.js");
  } finally {
    console.log = log;
  }
  assert.equal(printed.length, 3, printed.join("\n"));
  const [table, compiled, missing] = printed as [string, string, string];
  assert.match(table, /Helios Bank moved its renewal to June\./);
  assert.match(table, /\|/);
  assert.match(compiled, /Helios Bank moved its renewal to June\./);
  assert.equal(missing, "404 404: no memory '0000000000000000'");
});
