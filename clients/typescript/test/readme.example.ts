import { MeaningMemory, NotFound } from "meaning-memory";

const mm = new MeaningMemory(process.env.MM_URL ?? "http://127.0.0.1:8000", process.env.MM_TOKEN!);

const stored = await mm.remember("Helios Bank moved its renewal to June.", {
  category: "commitment",
  significance: 0.9,
});
const found = await mm.search("When does Helios Bank renew?", { limit: 5 });
console.log(found.table); // the hits as a markdown table, each with its score

const memId = String(stored.mem_id); // answers are JSON objects: narrow what you read
await mm.feedback(memId, "pin", "next year's budget depends on it");
const compiled = await mm.compiled({ budget: 2000 });
console.log(compiled.markdown); // the compiled memory file, for the agent's context

try {
  await mm.get("0000000000000000");
} catch (error) {
  if (!(error instanceof NotFound)) throw error;
  console.log(error.status, error.message); // 404 404: no memory '0000000000000000'
}
