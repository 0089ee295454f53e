// Response serialisers compiled once a process (docs/architecture.md, "HTTP"): Fastify compiles
// every route's response schema with fast-json-stringify when an app starts, and every app of a
// process (a second store, the multi-instance and test apps) declares the same schema objects. An
// app built after the first takes the serialiser already compiled for the same schema object and
// the same shared schemas, instead of compiling some 300 again.
import { SerializerSelector } from '@fastify/fast-json-stringify-compiler';

type Factory = ReturnType<typeof SerializerSelector>;
type Compiler = ReturnType<Factory>;
type Serializer = ReturnType<Compiler>;

const select = SerializerSelector();

/** Compiled serialisers by the shared schemas and options they were compiled with, then by route schema. */
const compiled = new Map<string, WeakMap<object, Serializer>>();

/** Fastify's `schemaController.compilersFactory.buildSerializer`: its default, remembering what it compiled. */
export const buildSerializer: Factory = (externalSchemas, options) => {
  const key = JSON.stringify([externalSchemas ?? null, options ?? null]);
  let bySchema = compiled.get(key);
  if (!bySchema) compiled.set(key, (bySchema = new WeakMap()));
  const compile = select(externalSchemas, options);
  const done = bySchema;
  return (route) => {
    const schema = route.schema;
    if (typeof schema !== 'object' || schema === null) return compile(route);
    let serialize = done.get(schema);
    if (!serialize) done.set(schema, (serialize = compile(route)));
    return serialize;
  };
};
