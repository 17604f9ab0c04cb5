/**
 * The engine's REST API for one agent (its token), as the Python client has it
 * (`meaning_memory.client`): one method per operation, camelCase. Requests go through
 * openapi-fetch, typed by the generated `paths`; every method resolves to the API's JSON
 * answer as the schema declares it, or rejects with a `MeaningMemoryError` (`errors.ts`).
 */
import { createHash, randomUUID } from "node:crypto";

import createClient from "openapi-fetch";

import { errorFor } from "./errors.js";
import type { paths } from "./schema.js";
import type { Answer, Body, CompileOptions, ListFilters, Markdown, Query } from "./types.js";

export interface Options {
  /** Milliseconds to wait for each answer (default 60 000). */
  timeoutMs?: number;
  /** Times to send again after a network failure (default 3): see `MeaningMemory`. */
  retries?: number;
  /** The first pause before sending again, doubled each time (milliseconds, default 500). */
  backoffMs?: number;
  /** The fetch to send with (default the global one). */
  fetch?: (request: Request) => Promise<Response>;
}

/** Which network failures a call is sent again after (see `MeaningMemory`). */
type Retry = "always" | "unsent";

/** Failures after which the request cannot have reached the engine. */
const UNSENT = new Set([
  "ECONNREFUSED",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "UND_ERR_CONNECT_TIMEOUT",
]);

/** A network failure ("unsent": the request never left; "sent": it may have), or undefined. */
function networkFailure(error: unknown): "unsent" | "sent" | undefined {
  if (error instanceof Error && error.name === "TimeoutError") return "sent";
  if (error instanceof TypeError && error.cause !== undefined) {
    const code = (error.cause as { code?: unknown }).code;
    return typeof code === "string" && UNSENT.has(code) ? "unsent" : "sent";
  }
  return undefined;
}

interface Sent<T> {
  data?: T;
  error?: unknown;
  response: Response;
}

/** A memory to write, with an idempotency key of its own unless it has one. */
function withKey<T extends { idempotency_key?: string | null }>(item: T): T {
  return item.idempotency_key ? item : { ...item, idempotency_key: randomUUID().replace(/-/g, "") };
}

/** JSON with every object's keys in order: what an item says, whatever order it was built in. */
function canonical(value: unknown): string {
  if (Array.isArray(value)) {
    return `[${value.map(canonical).join(",")}]`;
  }
  if (value !== null && typeof value === "object") {
    const entries = Object.entries(value as Record<string, unknown>)
      .filter(([, v]) => v !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, v]) => `${JSON.stringify(k)}:${canonical(v)}`).join(",")}}`;
  }
  return JSON.stringify(value) ?? "null";
}

/**
 * A batch's memory, with a key derived from what it says unless it has one: a batch sent again
 * (a retry, a script run twice) stores nothing new, as the raw API's batch without keys does.
 */
function withContentKey<T extends { idempotency_key?: string | null }>(item: T): T {
  if (item.idempotency_key) {
    return item;
  }
  const { idempotency_key: _unused, ...said } = item;
  const digest = createHash("sha256").update(canonical(said)).digest("hex");
  return { ...item, idempotency_key: `content-${digest}` };
}

/** The query of a `next` link as it came (a cursor page's link keeps the filters). */
function nextLink(cursor: string | undefined): string | undefined {
  return cursor && /^https?:\/\//.test(cursor) ? new URL(cursor).search.slice(1) : undefined;
}

/**
 * The API for one agent. A network failure is sent again (`retries`, with a growing pause):
 * reads always; `remember` and `bulkRemember` too, because the client gives each memory an
 * `idempotency_key` when the caller did not (a batch's derived from what each item says, so a
 * batch sent again stores nothing new), so a write the engine stored before the connection
 * broke is not stored twice; the other writes only when the request never reached
 * the engine (the connection was refused or could not be made).
 */
export class MeaningMemory {
  readonly baseUrl: string;
  private readonly http;
  private readonly timeoutMs: number;
  private readonly retries: number;
  private readonly backoffMs: number;

  constructor(baseUrl: string, token: string, options: Options = {}) {
    this.baseUrl = baseUrl.replace(/\/+$/, "");
    this.timeoutMs = options.timeoutMs ?? 60_000;
    this.retries = options.retries ?? 3;
    this.backoffMs = options.backoffMs ?? 500;
    this.http = createClient<paths, "application/json">({
      baseUrl: this.baseUrl,
      headers: { Authorization: `Bearer ${token}` },
      ...(options.fetch ? { fetch: options.fetch } : {}),
    });
  }

  private async call<T>(retry: Retry, send: (signal: AbortSignal) => Promise<Sent<T>>): Promise<T> {
    for (let attempt = 0; ; attempt++) {
      let sent: Sent<T>;
      try {
        sent = await send(AbortSignal.timeout(this.timeoutMs));
      } catch (error) {
        const failure = networkFailure(error);
        const giveUp = attempt >= this.retries || (retry === "unsent" && failure !== "unsent");
        if (failure === undefined || giveUp) throw error;
        await new Promise((resolve) => setTimeout(resolve, this.backoffMs * 2 ** attempt));
        continue;
      }
      if (!sent.response.ok) throw errorFor(sent.response, sent.error);
      return sent.data as T;
    }
  }

  /** Store one memory (the API's remember arguments besides its text as `fields`). */
  remember(
    text: string,
    fields: Omit<Body<"memories_create">, "text"> = {},
  ): Promise<Answer<"memories_create">> {
    const body = withKey({ ...fields, text });
    return this.call("always", (signal) => this.http.POST("/api/v1/memories", { body, signal }));
  }

  /** Store many memories, all or nothing. */
  bulkRemember(
    memories: Body<"memories_bulk_create">["memories"],
  ): Promise<Answer<"memories_bulk_create">> {
    const body = { memories: memories.map(withContentKey) };
    return this.call("always", (signal) =>
      this.http.POST("/api/v1/memories/bulk", { body, signal }),
    );
  }

  /**
   * Store a conversation: a memory per message (`{role, name, content, at}`), each once, so
   * the conversation may be sent again, or longer (`fields`: scope, category, metadata).
   */
  rememberMessages(
    session: string,
    messages: Body<"messages_remember">["messages"],
    fields: Omit<Body<"messages_remember">, "session" | "messages"> = {},
  ): Promise<Answer<"messages_remember">> {
    const body = { ...fields, session, messages };
    return this.call("always", (signal) => this.http.POST("/api/v1/messages", { body, signal }));
  }

  /**
   * Erase for good every memory you see that mentions an entity (`{entity}`) or matches a
   * metadata filter (`{metadata}`); `dry_run` only lists them.
   */
  eraseMatching(
    request: Body<"memories_erase_chosen">,
  ): Promise<Answer<"memories_erase_chosen">> {
    // A preview changes nothing: sent again if the connection broke.
    return this.call(request.dry_run === true ? "always" : "unsent", (signal) =>
      this.http.POST("/api/v1/memories/erase", { body: request, signal }),
    );
  }

  /** Search: the hits, each with its explanation, and a markdown table of them. */
  search(
    query: string,
    filters: Omit<Body<"search_create">, "query"> = {},
  ): Promise<Answer<"search_create">> {
    const body = { ...filters, query };
    return this.call("always", (signal) => this.http.POST("/api/v1/search", { body, signal }));
  }

  get(memId: string): Promise<Answer<"memories_retrieve">> {
    const params = { path: { mem_id: memId } };
    return this.call("always", (signal) =>
      this.http.GET("/api/v1/memories/{mem_id}", { params, signal }),
    );
  }

  /**
   * One page of memories without a query, newest first by default. `filters.cursor` is the
   * previous page's `next` link (or its cursor): the page after it, with its filters.
   */
  list(filters: ListFilters = {}): Promise<Answer<"memories_list">> {
    const link = nextLink(filters.cursor);
    // The metadata filter travels as JSON text in the query (the API's `metadata` parameter).
    const { metadata, ...rest } = filters;
    const query: Query<"memories_list"> =
      metadata === undefined ? rest : { ...rest, metadata: JSON.stringify(metadata) };
    const options =
      link === undefined ? { params: { query } } : { querySerializer: () => link };
    return this.call("always", (signal) =>
      this.http.GET("/api/v1/memories", { ...options, signal }),
    );
  }

  /** Every memory the filters keep, page after page. */
  async *listAll(
    filters: ListFilters = {},
  ): AsyncGenerator<Answer<"memories_list">["results"][number], void, undefined> {
    let page = await this.list(filters);
    for (;;) {
      yield* page.results;
      if (typeof page.next !== "string") return;
      page = await this.list({ cursor: page.next });
    }
  }

  /** important, demote, pin, unpin or forget, with the reason. */
  feedback(
    memId: string,
    action: Body<"memories_feedback_create">["action"],
    reason: string,
  ): Promise<Answer<"memories_feedback_create">> {
    const options = { params: { path: { mem_id: memId } }, body: { action, reason } };
    return this.call("unsent", (signal) =>
      this.http.POST("/api/v1/memories/{mem_id}/feedback", { ...options, signal }),
    );
  }

  forget(memId: string, reason: string): Promise<Answer<"memories_forget_create">> {
    const options = { params: { path: { mem_id: memId } }, body: { reason } };
    return this.call("unsent", (signal) =>
      this.http.POST("/api/v1/memories/{mem_id}/forget", { ...options, signal }),
    );
  }

  /** Erase a memory for good (`forget` keeps it); a tombstone keeps who, when and why. */
  erase(memId: string, reason: string): Promise<Answer<"memories_erase_create">> {
    const options = { params: { path: { mem_id: memId } }, body: { reason } };
    return this.call("unsent", (signal) =>
      this.http.POST("/api/v1/memories/{mem_id}/erase", { ...options, signal }),
    );
  }

  /** Link a memory to another (`to`) or to an entity (`entity`), with its `type`. */
  link(
    memId: string,
    fields: Body<"memories_links_create">,
  ): Promise<Answer<"memories_links_create">> {
    const options = { params: { path: { mem_id: memId } }, body: fields };
    return this.call("unsent", (signal) =>
      this.http.POST("/api/v1/memories/{mem_id}/links", { ...options, signal }),
    );
  }

  /** Remove a link (its row kept, with who and why). */
  unlink(
    memId: string,
    linkId: string,
    reason: string,
  ): Promise<Answer<"memories_links_remove_create">> {
    const options = { params: { path: { mem_id: memId, link_id: linkId } }, body: { reason } };
    return this.call("unsent", (signal) =>
      this.http.POST("/api/v1/memories/{mem_id}/links/{link_id}/remove", { ...options, signal }),
    );
  }

  /** The compiled memory file (its markdown, tokens, what was included and cut), as JSON. */
  compiled(options: CompileOptions = {}): Promise<Answer<"compiled_retrieve">> {
    // The metadata filter travels as JSON text in the query, as the list's does.
    const { metadata, ...rest } = options;
    const query: Query<"compiled_retrieve"> = { ...rest, format: "json" as const };
    if (metadata !== undefined) query.metadata = JSON.stringify(metadata);
    const params = { query };
    return this.call("always", (signal) => this.http.GET("/api/v1/compiled", { params, signal }));
  }

  /** The compiled file the last consolidation run kept for you: its markdown. */
  compiledKept(): Promise<Markdown<"compiled_kept_retrieve">> {
    return this.call("always", (signal) =>
      this.http.GET("/api/v1/compiled/kept", { parseAs: "text", signal }),
    );
  }

  /** Queue a consolidation run of your workspace (202, the run). */
  consolidate(options: Body<"consolidate_create"> = {}): Promise<Answer<"consolidate_create">> {
    return this.call("unsent", (signal) =>
      this.http.POST("/api/v1/consolidate", { body: options, signal }),
    );
  }

  /** A consolidation run: its state, phases and counts. */
  consolidationRun(runId: string): Promise<Answer<"consolidate_retrieve">> {
    const params = { path: { run_id: runId } };
    return this.call("always", (signal) =>
      this.http.GET("/api/v1/consolidate/{run_id}", { params, signal }),
    );
  }

  /** A story across sessions (`query` or `thread_id`, `limit`; off by default: MM_SAGA). */
  saga(request: Body<"saga_create">): Promise<Answer<"saga_create">> {
    return this.call("always", (signal) =>
      this.http.POST("/api/v1/saga", { body: request, signal }),
    );
  }

  /** The entities you may know of (`query`, `type`, `page`, `page_size`). */
  entities(filters: Query<"entities_list"> = {}): Promise<Answer<"entities_list">> {
    const params = { query: filters };
    return this.call("always", (signal) => this.http.GET("/api/v1/entities", { params, signal }));
  }

  /** Put an entity in the workspace's gazetteer (its name and aliases then found in texts). */
  declareEntity(
    name: string,
    type: Body<"entities_create">["type"],
    aliases?: Body<"entities_create">["aliases"],
  ): Promise<Answer<"entities_create">> {
    const body = aliases === undefined ? { name, type } : { name, type, aliases };
    return this.call("unsent", (signal) => this.http.POST("/api/v1/entities", { body, signal }));
  }

  /** An entity and the memories you see that mention it (`page`, `page_size`). */
  entity(
    entityId: string,
    page: Query<"entities_retrieve"> = {},
  ): Promise<Answer<"entities_retrieve">> {
    const params = { path: { entity_id: entityId }, query: page };
    return this.call("always", (signal) =>
      this.http.GET("/api/v1/entities/{entity_id}", { params, signal }),
    );
  }

  /** The sources of the memories you see, each with its record. */
  sources(filters: Query<"sources_list"> = {}): Promise<Answer<"sources_list">> {
    const params = { query: filters };
    return this.call("always", (signal) => this.http.GET("/api/v1/sources", { params, signal }));
  }

  /** One source's record and the events behind it (`kind`: writer or entity). */
  source(kind: string, key: string): Promise<Answer<"sources_detail">> {
    const params = { path: { kind, key } };
    return this.call("always", (signal) =>
      this.http.GET("/api/v1/sources/{kind}/{key}", { params, signal }),
    );
  }

  /** Follow links from a memory or an entity (`from`, `depth`, …; opt-in: MM_TRAVERSAL). */
  traverse(request: Body<"traverse_create">): Promise<Answer<"traverse_create">> {
    return this.call("always", (signal) =>
      this.http.POST("/api/v1/traverse", { body: request, signal }),
    );
  }

  /** The shortest path between two nodes (`from`, `to`, `depth`; opt-in: MM_TRAVERSAL). */
  explainPath(request: Body<"explain_path_create">): Promise<Answer<"explain_path_create">> {
    return this.call("always", (signal) =>
      this.http.POST("/api/v1/explain-path", { body: request, signal }),
    );
  }

  /** Memories by different writers that disagree (`status`, `page`; off by default). */
  divergences(filters: Query<"divergences_list"> = {}): Promise<Answer<"divergences_list">> {
    const params = { query: filters };
    return this.call("always", (signal) =>
      this.http.GET("/api/v1/divergences", { params, signal }),
    );
  }

  /** One divergence and its two memories. */
  divergence(divergenceId: string): Promise<Answer<"divergences_retrieve">> {
    const params = { path: { divergence_id: divergenceId } };
    return this.call("always", (signal) =>
      this.http.GET("/api/v1/divergences/{divergence_id}", { params, signal }),
    );
  }

  /** The STARE readiness report: each capability's implementation, evidence and verdict. */
  readiness(): Promise<Answer<"readiness_retrieve">> {
    return this.call("always", (signal) => this.http.GET("/api/v1/readiness", { signal }));
  }

  /** Each capability's evidence over time (all, or one `capability`; its last `runs`). */
  readinessHistory(
    capability?: Query<"readiness_history_retrieve">["capability"],
    runs?: Query<"readiness_history_retrieve">["runs"],
  ): Promise<Answer<"readiness_history_retrieve">> {
    const params = { query: { capability, runs } };
    return this.call("always", (signal) =>
      this.http.GET("/api/v1/readiness/history", { params, signal }),
    );
  }
}
