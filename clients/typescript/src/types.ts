/**
 * What each operation takes and answers, read from the generated schema (`schema.ts`, made from
 * `openapi.json` by openapi-typescript): no shape is written here by hand.
 */
import type { components, operations } from "./schema.js";

/** An operation of the API, by its OpenAPI operationId (e.g. `memories_create`). */
export type Operation = keyof operations;

/** The schema's named shapes (`Schemas["RememberInput"]`, `Schemas["ValidationErrors"]`, …). */
export type Schemas = components["schemas"];

type Responses<O extends Operation> = operations[O]["responses"];
type Succeeded<O extends Operation> = Responses<O>[Extract<keyof Responses<O>, 200 | 201 | 202>];

/** The JSON an operation answers on success, as the schema declares it. */
export type Answer<O extends Operation> =
  Succeeded<O> extends { content: { "application/json": infer B } } ? B : never;

/** The markdown an operation answers on success (the kept compiled file). */
export type Markdown<O extends Operation> =
  Succeeded<O> extends { content: { "text/markdown": infer B } } ? B : never;

/** An operation's JSON body. */
export type Body<O extends Operation> =
  NonNullable<operations[O]["requestBody"]> extends { content: { "application/json": infer B } }
    ? B
    : never;

/** An operation's query parameters. */
export type Query<O extends Operation> = NonNullable<operations[O]["parameters"]["query"]>;

/** The body of an error answer: `{detail}`, or each field with the rules it broke. */
export type ErrorBody = Schemas["ErrorDetail"] | Schemas["ValidationErrors"];

/** A filter on memories' metadata (docs/metadata.md): the search's `metadata` field. */
export type MetadataFilter = NonNullable<Body<"search_create">["metadata"]>;

/** The memory list's filters, with `metadata` given as the search takes it (an object). */
export type ListFilters = Omit<Query<"memories_list">, "metadata"> & { metadata?: MetadataFilter };

/** The compiled file's options, with `metadata` given as the search takes it (an object). */
export type CompileOptions = Omit<Query<"compiled_retrieve">, "format" | "metadata"> & {
  metadata?: MetadataFilter;
};
