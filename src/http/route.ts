// One route, one declaration: method, url, schema, who may call it, and the handler. Features
// build lists of these from the services they need; src/routes.ts lists every feature's, in the
// order they register, and the app registers that one table. Authorisation is read from `config`
// by the authentication hook (scope and role, before anything else of the request runs), never
// checked by hand in a handler; ownership filtering is `ownerFilter` below.
import type { TypeBoxTypeProvider } from '@fastify/type-provider-typebox';
import type {
  ContextConfigDefault,
  FastifyReply,
  FastifyRequest,
  FastifySchema,
  FastifySchemaCompiler,
  HTTPMethods,
  RawReplyDefaultExpression,
  RawRequestDefaultExpression,
  RawServerDefault,
  RouteGenericInterface,
  RouteOptions,
  onRequestHookHandler,
  onResponseHookHandler,
  onSendHookHandler,
  preHandlerHookHandler,
  preValidationHookHandler,
} from 'fastify';
import { Type } from 'typebox';
import type { Principal, Role, Scope } from '../lib/principal.ts';
import type { PersonRole } from '../lib/person-roles.ts';

interface RouteAccess {
  /** the scope the route requires; a route without one must be listed in http/public-routes.ts */
  scope?: Scope;
  /** the lowest role admitted, checked with the scope */
  role?: Role;
  /** the lowest person role, where scope and role alone would admit people who should not (lib/person-roles.ts) */
  person?: PersonRole;
  /** the token endpoint: its errors carry the RFC 6749 members */
  oauth?: boolean;
  /** a fixed operationId for the OpenAPI document (else derived from method and path) */
  operationId?: string;
  /**
   * the body may be left out, and then reads as `{}`: a POST whose fields are all optional; the
   * OpenAPI document marks its request body optional (docs/api.md names each such route)
   */
  bodyOptional?: boolean;
}

interface RouteFields {
  method: HTTPMethods | HTTPMethods[];
  url: string;
  config?: RouteAccess & Record<string, unknown>;
  bodyLimit?: number;
  onRequest?: onRequestHookHandler;
  preValidation?: preValidationHookHandler;
  preHandler?: preHandlerHookHandler;
  onSend?: onSendHookHandler;
  onResponse?: onResponseHookHandler;
}

/** The request as the handler sees it: body, params, querystring and headers are the schema's static types. */
type SchemaRequest<S extends FastifySchema> = FastifyRequest<
  RouteGenericInterface,
  RawServerDefault,
  RawRequestDefaultExpression,
  S,
  TypeBoxTypeProvider
>;

/** The reply of a route with schema S: what it sends is checked against the schema's responses. */
type SchemaReply<S extends FastifySchema> = FastifyReply<
  RouteGenericInterface,
  RawServerDefault,
  RawRequestDefaultExpression,
  RawReplyDefaultExpression,
  ContextConfigDefault,
  S,
  TypeBoxTypeProvider
>;

/** A route as written: the handler's types come from its schema, which Fastify validates the request against. */
interface TypedRouteDefinition<S extends FastifySchema> extends RouteFields {
  schema?: S;
  validatorCompiler?: never;
  handler: (request: SchemaRequest<S>, reply: SchemaReply<S>) => unknown;
}

/**
 * A route whose body the handler validates itself, in one step with what depends on the policy:
 * the body's schema only documents it, so the handler receives the body unknown.
 */
interface SelfValidatedRouteDefinition<S extends FastifySchema> extends RouteFields {
  schema?: S;
  validatorCompiler: FastifySchemaCompiler<unknown>;
  handler: (request: SchemaRequest<Omit<S, 'body'>>, reply: SchemaReply<S>) => unknown;
}

/**
 * A route as the table holds it, whatever its schema. The handler is a method so that a typed one
 * is accepted here: Fastify validates the request against the schema before calling it, which is
 * what makes the handler's narrower request type true at run time.
 */
export interface RouteDefinition extends RouteFields {
  schema?: FastifySchema;
  validatorCompiler?: FastifySchemaCompiler<unknown>;
  handler(request: FastifyRequest, reply: FastifyReply): unknown;
}

/** A route whose handler is typed by its schema, stored in the table's general form. */
export function defineRoute<const S extends FastifySchema>(
  definition: SelfValidatedRouteDefinition<S>,
): RouteDefinition;
export function defineRoute<const S extends FastifySchema>(definition: TypedRouteDefinition<S>): RouteDefinition;
export function defineRoute(definition: RouteDefinition): RouteDefinition {
  return definition;
}

/** The schema of a 204: documented as null, sent without a payload (`reply.code(204).send()`). */
export const NoContent = Type.Unsafe<undefined>(Type.Null());

/** A left-out body is `{}`, so the route's schema (every field optional) checks it as one. */
const emptyBody: preValidationHookHandler = async (request) => {
  request.body ??= {};
};

/** The table's entries as Fastify registers them. */
export function asRouteOptions(definition: RouteDefinition): RouteOptions {
  if (!definition.config?.bodyOptional) return definition;
  const own = definition.preValidation;
  return { ...definition, preValidation: own ? [emptyBody, own] : emptyBody };
}

/**
 * The owner a query filters on: undefined for an admin, who sees every client's rows of its
 * environment; the principal's own client for anyone else (whose other rows are "not found").
 */
export function ownerFilter(principal: Principal): string | undefined {
  // people see their environment's data by role (docs/api.md, "People"); machines, what they own
  return principal.role === 'admin' || principal.kind === 'user' ? undefined : principal.clientId;
}
