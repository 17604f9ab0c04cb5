/**
 * The client against a served engine, as an agent uses it: MM_URL, MM_TOKEN (an agent) and
 * MM_OTHER_TOKEN (an agent of another workspace) from the environment. The engine must have
 * MM_TRAVERSAL, MM_SAGA and MM_DIVERGENCE on, and the first agent's workspace one kept compiled
 * file (a consolidation run's compile phase), as `meaning_memory/tests/test_typescript_client.py`
 * serves it.
 */
import assert from "node:assert/strict";
import { test } from "node:test";

import {
  Conflict,
  InvalidInput,
  MeaningMemory,
  MeaningMemoryError,
  NotAuthorized,
  NotFound,
  TooManyRequests,
  Unavailable,
} from "meaning-memory";

function env(name: string): string {
  const value = process.env[name];
  if (!value) {
    throw new Error(
      `${name} is not set: these tests run against a served engine (MM_URL, MM_TOKEN, and ` +
        "MM_OTHER_TOKEN for an agent of another workspace)",
    );
  }
  return value;
}

const url = env("MM_URL");
const mm = new MeaningMemory(url, env("MM_TOKEN"));
const outsider = new MeaningMemory(url, env("MM_OTHER_TOKEN"));
/** Words of this run only, so that a search finds this run's memories. */
const tag = `Quillon${Date.now().toString(36)}`;

function str(value: unknown): string {
  assert.equal(typeof value, "string", `expected a string, got ${JSON.stringify(value)}`);
  return value as string;
}

function records(value: unknown): Record<string, unknown>[] {
  assert.ok(Array.isArray(value), `expected a list, got ${JSON.stringify(value)}`);
  return value as Record<string, unknown>[];
}

/** The error a call rejects with, checked to be of `kind`. */
async function failure<E extends MeaningMemoryError>(
  kind: new (...args: never[]) => E,
  call: Promise<unknown>,
): Promise<E> {
  const error: unknown = await call.then(
    (answer) => assert.fail(`expected ${kind.name}, got ${JSON.stringify(answer)}`),
    (rejected: unknown) => rejected,
  );
  assert.ok(error instanceof kind, `expected ${kind.name}, got ${String(error)}`);
  assert.ok(error instanceof MeaningMemoryError);
  return error;
}

test("remember, get, search, feedback, forget and list", async () => {
  const stored = await mm.remember(`${tag} Logistics renews its contract every March.`, {
    category: "commitment",
    significance: 0.9,
  });
  const memId = str(stored.mem_id);
  assert.equal(stored.category, "commitment");
  assert.equal((await mm.get(memId)).text, `${tag} Logistics renews its contract every March.`);

  const found = await mm.search(`When does ${tag} Logistics renew?`, { limit: 5 });
  assert.equal(records(found.results)[0]?.mem_id, memId);
  assert.match(str(found.table), new RegExp(tag));

  const pinned = await mm.feedback(memId, "pin", "the renewal budget depends on it");
  assert.equal(pinned.pinned, true);
  const other = await mm.remember(`${tag} Logistics asked for a discount.`);
  const forgotten = await mm.forget(str(other.mem_id), "it was a joke");
  assert.equal(forgotten.status, "forgotten");

  const listed = records((await mm.list({ category: "commitment", limit: 100 })).results);
  assert.ok(listed.some((memory) => memory.mem_id === memId));
  const everything = records((await mm.list({ limit: 100 })).results);
  assert.ok(!everything.some((memory) => memory.mem_id === other.mem_id), "forgotten, listed");
});

test("the metadata filter, one object for the search and the list", async () => {
  const orion = await mm.remember(`${tag} Orion renews in March.`, {
    metadata: { customer: `${tag}-orion`, seats: 120 },
  });
  await mm.remember(`${tag} Kestrel renews in May.`, {
    metadata: { customer: `${tag}-kestrel`, seats: 12 },
  });
  const only = { customer: `${tag}-orion`, seats: { gte: 50 } };
  const found = records((await mm.search(`${tag} renews`, { metadata: only })).results);
  assert.deepEqual(
    found.map((hit) => hit.mem_id),
    [orion.mem_id],
  );
  const listed = records((await mm.list({ metadata: only })).results);
  assert.deepEqual(
    listed.map((memory) => memory.mem_id),
    [orion.mem_id],
  );
  const bad = await failure(
    InvalidInput,
    mm.search("renews", { metadata: { tier: { in: [] } } }),
  );
  assert.match(String(bad.errors.metadata), /tier\.in: must be a non-empty list/);
});

test("a conversation, a customer's compiled file and its erasure", async () => {
  const customer = `${tag}-zephyr`;
  const chat = [
    { role: "user" as const, name: "Priya", content: `${tag} Zephyr wants 80 seats.` },
    { role: "assistant" as const, content: `${tag} Noted for Zephyr.` },
  ];
  const stored = await mm.rememberMessages(`${tag}-call`, chat, { metadata: { customer } });
  assert.equal(stored.stored, 2);
  assert.equal((await mm.rememberMessages(`${tag}-call`, chat, { metadata: { customer } })).existing, 2);
  const file = await mm.compiled({ metadata: { customer }, group_by: "entity", display_mode: "off" });
  assert.match(file.markdown, new RegExp(`Priya: ${tag} Zephyr wants 80 seats\\.`));
  const ids = stored.results.map((result) => result.mem_id).sort();
  assert.equal((await outsider.eraseMatching({ metadata: { customer }, dry_run: true })).count, 0);
  const preview = await mm.eraseMatching({ metadata: { customer }, dry_run: true });
  assert.deepEqual([...preview.erased].sort(), ids);
  const bad = await failure(InvalidInput, mm.eraseMatching({ metadata: { customer } }));
  assert.ok("reason" in bad.errors);
  const done = await mm.eraseMatching({ metadata: { customer }, reason: "asked" });
  assert.deepEqual([...done.erased].sort(), ids);
});

test("a retried remember with its idempotency key stores nothing new", async () => {
  const key = `${tag}-once`;
  const first = await mm.remember(`${tag} Tern Air pays by wire.`, { idempotency_key: key });
  const again = await mm.remember(`${tag} Tern Air pays by wire.`, { idempotency_key: key });
  assert.equal(again.mem_id, first.mem_id);
});

test("bulk remember, then every page of the list through its next links", async () => {
  const source = `${tag}-runbook`;
  const written = await mm.bulkRemember([
    { text: `${tag} Step one: open the ticket.`, source },
    { text: `${tag} Step two: call the customer.`, source },
    { text: `${tag} Step three: close the ticket.`, source },
  ]);
  assert.equal(written.stored, 3);
  const ids = records(written.results).map((result) => str(result.mem_id));
  // The same batch sent again (its items' fields in another order): nothing new is stored.
  const again = await mm.bulkRemember([
    { source, text: `${tag} Step one: open the ticket.` },
    { source, text: `${tag} Step two: call the customer.` },
    { source, text: `${tag} Step three: close the ticket.` },
  ]);
  assert.equal(again.stored, 0);
  assert.deepEqual(
    records(again.results).map((result) => str(result.mem_id)),
    ids,
  );

  const first = await mm.list({ source, limit: 1 });
  assert.equal(records(first.results).length, 1);
  assert.match(str(first.next), /cursor=/);
  const second = await mm.list({ cursor: str(first.next) });
  const [onFirst, onSecond] = [first, second].map((page) => str(records(page.results)[0]?.mem_id));
  assert.notEqual(onSecond, onFirst);
  assert.ok(ids.includes(str(onSecond)), "the next link keeps the filter");

  const all: string[] = [];
  for await (const memory of mm.listAll({ source, limit: 1 })) {
    all.push(memory.mem_id); // typed: a memory of the list's page
  }
  assert.deepEqual(all.sort(), ids.sort(), "every page, each memory once, the filter kept");
});

test("links, entities and sources", async () => {
  const first = str((await mm.remember(`${tag} Orbis Freight moved to Lyon.`)).mem_id);
  const second = str((await mm.remember(`${tag} Orbis Freight opened a depot.`)).mem_id);
  const link = await mm.link(first, { to: second, type: "relates_to", note: "same move" });
  assert.equal(link.from, first);
  assert.equal(link.to, second);
  const removed = await mm.unlink(first, str(link.link_id), "not related after all");
  assert.equal(removed.link_id, link.link_id);
  assert.notEqual(removed.removed_at, null);

  const declared = await mm.declareEntity(`${tag} Orbis Freight`, "customer", [`${tag} OF`]);
  assert.equal(declared.declared, true);
  const entityId = str(declared.entity_id);
  // The offline model may have found other names of this run: the declared one is among them.
  const listed = records((await mm.entities({ query: tag, type: "customer" })).results);
  assert.ok(
    listed.some((entity) => entity.entity_id === entityId && entity.declared === true),
    JSON.stringify(listed),
  );
  const entity = await mm.entity(entityId, { page_size: 5 });
  assert.equal((entity.entity as Record<string, unknown>).entity_id, entityId);

  const sources = records((await mm.sources({ kind: "writer" })).results);
  const writer = str(sources[0]?.key);
  const source = await mm.source("writer", writer);
  assert.match(JSON.stringify(source), new RegExp(writer));
});

test("traverse, explain a path, recall a saga, read divergences", async () => {
  const first = str((await mm.remember(`${tag} Corvid Labs signed in May.`)).mem_id);
  const second = str((await mm.remember(`${tag} Corvid Labs paid in June.`)).mem_id);
  await mm.link(first, { to: second, type: "supports" });

  const walked = await mm.traverse({ from: first, depth: 1 });
  const reached = records(walked.nodes).map(
    (step) => (step.node as Record<string, unknown>).mem_id,
  );
  assert.ok(reached.includes(second), JSON.stringify(walked));
  const path = await mm.explainPath({ from: first, to: second });
  assert.equal(path.found, true);

  const saga = await mm.saga({ query: `${tag} Corvid Labs` });
  assert.ok(records(saga.memories).some((memory) => memory.mem_id === first));

  assert.deepEqual(records((await mm.divergences({ status: "open" })).results), []);
  await failure(NotFound, mm.divergence("0000000000000000"));
});

test("the compiled file, the kept one, a consolidation run, readiness", async () => {
  const stored = await mm.remember(`${tag} Vela Health renews in April.`, { significance: 1 });
  const compiled = await mm.compiled({ budget: 2000, show_ids: true });
  assert.match(str(compiled.markdown), new RegExp(str(stored.mem_id)));
  assert.equal(compiled.budget, 2000);

  assert.match(await mm.compiledKept(), /^# Memory: /); // markdown, not JSON
  await failure(NotFound, outsider.compiledKept());

  // In the other workspace, where no bulk write has queued a run already.
  const run = await outsider.consolidate({ dry_run: true, phases: ["dedupe"] });
  const runId = str(run.run_id);
  assert.equal((await outsider.consolidationRun(runId)).run_id, runId);
  await failure(NotFound, mm.consolidationRun(runId));
  const busy = await failure(Conflict, outsider.consolidate({ dry_run: true }));
  assert.match(busy.message, new RegExp(runId));

  const readiness = await mm.readiness();
  assert.ok(records(readiness.capabilities).length > 0);
  const history = await mm.readinessHistory("S/core", 1);
  assert.deepEqual(
    records(history.capabilities).map((capability) => capability.key),
    ["S/core"],
  );
});

test("erase removes a memory for good", async () => {
  const memId = str((await mm.remember(`${tag} A note to erase.`)).mem_id);
  const erased = await mm.erase(memId, "asked to");
  assert.deepEqual(erased.erased, [memId]);
  await failure(NotFound, mm.get(memId));
});

test("a missing id is a 404, bad input a 400 naming the field, a bad token a 401", async () => {
  const missing = await failure(NotFound, mm.get("0000000000000000"));
  assert.equal(missing.status, 404);
  assert.match(missing.message, /^404: /);

  const invalid = await failure(InvalidInput, mm.remember("x", { significance: 2 }));
  assert.equal(invalid.status, 400);
  assert.deepEqual(Object.keys(invalid.errors), ["significance"]);
  assert.deepEqual(invalid.body, invalid.errors);
  const memId = str((await mm.remember(`${tag} Feedback needs a reason.`)).mem_id);
  const blank = await failure(InvalidInput, mm.feedback(memId, "pin", " "));
  assert.deepEqual(Object.keys(blank.errors), ["reason"]);

  const stranger = new MeaningMemory(url, "mm_not-a-token");
  assert.equal((await failure(NotAuthorized, stranger.readiness())).status, 401);
});

test("another workspace's memory is a 404, told apart from a missing one by no one", async () => {
  const theirs = str((await outsider.remember(`${tag} Globex keeps its own notes.`)).mem_id);
  assert.equal((await outsider.get(theirs)).mem_id, theirs);
  const missing = "0000000000000000";
  /** The error's body, the id it names put aside. */
  const told = (error: MeaningMemoryError, id: string) =>
    JSON.stringify(error.body).replaceAll(id, "<id>");

  const mine = str((await mm.remember(`${tag} Mine alone.`)).mem_id);
  const asks: [string, (id: string) => Promise<unknown>][] = [
    ["get", (id) => mm.get(id)],
    ["feedback", (id) => mm.feedback(id, "demote", "not mine")],
    ["erase", (id) => mm.erase(id, "not mine")],
    ["link", (id) => mm.link(mine, { to: id, type: "relates_to" })],
  ];
  for (const [name, ask] of asks) {
    const theirError = await failure(NotFound, ask(theirs));
    const missingError = await failure(NotFound, ask(missing));
    assert.equal(told(theirError, theirs), told(missingError, missing), name);
  }
  // Input that names it: the field is in `errors`.
  const named = await failure(NotFound, mm.search("notes", { related_to: theirs }));
  assert.deepEqual(Object.keys(named.errors), ["related_to"]);

  const found = await outsider.search(`${tag} Logistics renews its contract`);
  assert.ok(!records(found.results).some((hit) => str(hit.text).includes("Logistics")));
  assert.equal((await outsider.get(theirs)).status, "active", "the outsider's memory is intact");
});

/** A fetch that answers `response` without sending anything (statuses a test cannot cause). */
function answering(response: () => Response) {
  return async (_request: Request) => response();
}

test("statuses become their errors: 429 with Retry-After, 5xx, a body that is not JSON", async () => {
  const limited = new MeaningMemory(url, "t", {
    fetch: answering(
      () =>
        new Response('{"detail": "slow down"}', { status: 429, headers: { "Retry-After": "7" } }),
    ),
  });
  const tooMany = await failure(TooManyRequests, limited.readiness());
  assert.equal(tooMany.retryAfter, 7);
  assert.equal(tooMany.message, "429: slow down");

  const down = new MeaningMemory(url, "t", {
    fetch: answering(() => new Response("Bad Gateway", { status: 502 })),
  });
  const unavailable = await failure(Unavailable, down.get("0000000000000000"));
  assert.deepEqual(unavailable.body, { detail: "Bad Gateway" });
});

/** The global fetch, failing as a refused connection (`code`) the first `times` it is called. */
function failingFirst(times: number, code: string, seen: Request[]) {
  return async (request: Request) => {
    seen.push(request.clone());
    if (seen.length <= times) throw new TypeError("fetch failed", { cause: { code } });
    return fetch(request);
  };
}

test("a refused connection is sent again; a remember keeps its idempotency key", async () => {
  const seen: Request[] = [];
  const flaky = new MeaningMemory(url, env("MM_TOKEN"), {
    backoffMs: 1,
    fetch: failingFirst(2, "ECONNREFUSED", seen),
  });
  const stored = await flaky.remember(`${tag} Sent on the third try.`);
  assert.equal(seen.length, 3);
  const keys = await Promise.all(
    seen.map(async (request) =>
      str(((await request.json()) as Record<string, unknown>).idempotency_key),
    ),
  );
  assert.equal(new Set(keys).size, 1);
  assert.match(str(keys[0]), /^[0-9a-f]{32}$/);
  assert.equal((await mm.get(str(stored.mem_id))).text, `${tag} Sent on the third try.`);
});

test("a write that may have arrived is not sent again; retries end", async () => {
  const memId = str((await mm.remember(`${tag} Feedback once.`)).mem_id);
  const seen: Request[] = [];
  const reset = new MeaningMemory(url, env("MM_TOKEN"), {
    backoffMs: 1,
    fetch: failingFirst(1, "ECONNRESET", seen),
  });
  await assert.rejects(reset.feedback(memId, "pin", "once"), TypeError);
  assert.equal(seen.length, 1, "feedback is not sent again after a connection reset");

  const gone: Request[] = [];
  const never = new MeaningMemory(url, env("MM_TOKEN"), {
    retries: 2,
    backoffMs: 1,
    fetch: failingFirst(99, "ECONNREFUSED", gone),
  });
  await assert.rejects(never.get(memId), TypeError);
  assert.equal(gone.length, 3, "the first try and two retries");
});
