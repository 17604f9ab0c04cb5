export { MeaningMemory } from "./client.js";
export type { Options } from "./client.js";
export {
  Conflict,
  InvalidInput,
  MeaningMemoryError,
  NotAuthorized,
  NotFound,
  TooManyRequests,
  Unavailable,
} from "./errors.js";
export type {
  Answer,
  Body,
  CompileOptions,
  ErrorBody,
  ListFilters,
  Markdown,
  MetadataFilter,
  Operation,
  Query,
  Schemas,
} from "./types.js";
export type { components, operations, paths } from "./schema.js";
