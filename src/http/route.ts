// One route, one declaration: method, url, schema, who may call it, and the handler. Features
// build lists of these from the services they need; src/routes.ts lists every feature's, in the
// order they register, and the app registers that one table. Authorisation is read from `config`
// by the authentication hook (scope and role, before anything else of the request runs), never
// checked by hand in a handler; ownership filtering is `ownerFilter` below.
import type {
  FastifyReply,
  FastifyRequest,
  FastifySchema,
  FastifySchemaCompiler,
  HTTPMethods,
  RouteGenericInterface,
  RouteOptions,
  onRequestHookHandler,
  onResponseHookHandler,
  onSendHookHandler,
  preHandlerHookHandler,
  preValidationHookHandler,
} from 'fastify';
import type { Principal, Role, Scope } from '../lib/principal.ts';

interface RouteAccess {
  /** the scope the route requires; a route without one is public */
  scope?: Scope;
  /** the lowest role admitted, checked with the scope */
  role?: Role;
  /** the token endpoint: its errors carry the RFC 6749 members */
  oauth?: boolean;
  /** a fixed operationId for the OpenAPI document (else derived from method and path) */
  operationId?: string;
}

export interface RouteDefinition<G extends RouteGenericInterface = RouteGenericInterface> {
  method: HTTPMethods | HTTPMethods[];
  url: string;
  config?: RouteAccess & Record<string, unknown>;
  schema?: FastifySchema;
  bodyLimit?: number;
  /** only for a body the handler validates itself, in one step with what depends on the policy */
  validatorCompiler?: FastifySchemaCompiler<unknown>;
  onRequest?: onRequestHookHandler;
  preValidation?: preValidationHookHandler;
  preHandler?: preHandlerHookHandler;
  onSend?: onSendHookHandler;
  onResponse?: onResponseHookHandler;
  handler: (request: FastifyRequest<G>, reply: FastifyReply) => unknown;
}

/** A typed route definition (the generic types the handler's request), stored untyped in the table. */
export function defineRoute<G extends RouteGenericInterface = RouteGenericInterface>(
  definition: RouteDefinition<G>,
): RouteDefinition {
  return definition as unknown as RouteDefinition;
}

/** The table's entries as Fastify registers them. */
export function asRouteOptions(definition: RouteDefinition): RouteOptions {
  return definition as unknown as RouteOptions;
}

/**
 * The owner a query filters on: undefined for an admin, who sees every client's rows of its
 * environment; the principal's own client for anyone else (whose other rows are "not found").
 */
export function ownerFilter(principal: Principal): string | undefined {
  return principal.role === 'admin' ? undefined : principal.clientId;
}
