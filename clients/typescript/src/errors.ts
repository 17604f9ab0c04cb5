/**
 * An error answer of the API raises one of these, chosen by its status, as the Python client
 * does (`meaning_memory.client`): each keeps the status and the API's body.
 */
import type { ErrorBody } from "./types.js";

/** An error answer of the API: its status and body (`errors`: field → the rules it broke). */
export class MeaningMemoryError extends Error {
  readonly status: number;
  readonly body: ErrorBody;
  /** A validation error's fields and their messages (a 400, or a 404 naming a field); else {}. */
  readonly errors: Record<string, string[]>;

  constructor(status: number, body: ErrorBody) {
    const detail = "detail" in body && typeof body.detail === "string" ? body.detail : undefined;
    const errors: Record<string, string[]> = {};
    if (detail === undefined) {
      for (const [field, messages] of Object.entries(body)) {
        if (Array.isArray(messages)) errors[field] = messages.map(String);
      }
    }
    const told = Object.entries(errors).map(([field, rules]) => `${field}: ${rules.join(" ")}`);
    super(`${status}: ${detail ?? (told.join("; ") || JSON.stringify(body))}`);
    this.name = new.target.name;
    this.status = status;
    this.body = body;
    this.errors = errors;
  }
}

/** 400: the fields and the rules they broke are in `errors`. */
export class InvalidInput extends MeaningMemoryError {}

/** 401 or 403: a missing, wrong or revoked token, what it may not do, or a capability off. */
export class NotAuthorized extends MeaningMemoryError {}

/**
 * 404: unknown, or not visible to this agent (the API never tells the two apart); when the
 * input named it (a memory to link to, an entity to filter by), `errors` says which field.
 */
export class NotFound extends MeaningMemoryError {}

/** 409: a run in progress, or input that clashes with what is stored (`errors`). */
export class Conflict extends MeaningMemoryError {}

/** 429: a fair use limit; `retryAfter` seconds, when the engine said. */
export class TooManyRequests extends MeaningMemoryError {
  readonly retryAfter: number | undefined;

  constructor(status: number, body: ErrorBody, retryAfter?: number) {
    super(status, body);
    this.retryAfter = retryAfter;
  }
}

/** 5xx: the engine, its database or its embedder could not answer. */
export class Unavailable extends MeaningMemoryError {}

const BY_STATUS: Record<number, typeof MeaningMemoryError> = {
  400: InvalidInput,
  401: NotAuthorized,
  403: NotAuthorized,
  404: NotFound,
  409: Conflict,
};

/** The error for an answer that was not a success (its body as openapi-fetch parsed it). */
export function errorFor(response: Response, parsed: unknown): MeaningMemoryError {
  const body: ErrorBody =
    parsed !== null && typeof parsed === "object" && !Array.isArray(parsed)
      ? (parsed as ErrorBody)
      : { detail: String(parsed ?? response.statusText) };
  const status = response.status;
  if (status === 429) {
    const after = response.headers.get("Retry-After");
    return new TooManyRequests(status, body, after ? Number(after) : undefined);
  }
  if (status >= 500) return new Unavailable(status, body);
  return new (BY_STATUS[status] ?? MeaningMemoryError)(status, body);
}
