// OpenAPI 3.1 generated from the same TypeBox schemas that validate requests, served as JSON and
// as an interactive Swagger UI page (served from the package: no CDN needed).
import type { FastifyInstance } from 'fastify';
import fp from 'fastify-plugin';
import swagger from '@fastify/swagger';

export const swaggerPlugin = fp(async function swaggerSetup(app: FastifyInstance) {
  await app.register(swagger, {
    openapi: {
      openapi: '3.1.0',
      info: {
        title: 'Vouch',
        version: '1.0.0',
        description: 'Counterparty-risk scoring and dispute analysis for P2P crypto/fiat marketplaces. Errors are RFC 9457 problem documents.',
      },
      components: {
        securitySchemes: {
          bearer: { type: 'http', scheme: 'bearer', bearerFormat: 'JWT' },
          apiKey: { type: 'apiKey', in: 'header', name: 'X-API-Key' },
        },
      },
    },
    transform: ({ schema, url, route }) => {
      const scope = (route.config as { scope?: string } | undefined)?.scope;
      if (!scope || !schema) return { schema, url };
      return { schema: { ...schema, security: [{ bearer: [scope] }, { apiKey: [scope] }] } as typeof schema, url };
    },
  });
});

export const DOCS_CSP =
  "default-src 'self'; base-uri 'self'; connect-src 'self'; font-src 'self' data:; form-action 'self'; frame-ancestors 'self'; " +
  "img-src 'self' data:; object-src 'none'; script-src 'self'; script-src-attr 'none'; style-src 'self'";

export async function docsRoutes(app: FastifyInstance) {
  app.get('/api/v1/openapi.json', { schema: { hide: true } }, async () => app.swagger());
  const { default: swaggerUi } = await import('@fastify/swagger-ui');
  await app.register(swaggerUi, {
    routePrefix: '/docs',
    // The package's own policy (staticCSP: true) says upgrade-insecure-requests, which makes a
    // browser fetch the page's scripts over https: from any host but localhost — a blank page on
    // a plain-HTTP internal host. This one allows the same origin only, so the page also works
    // offline (the bundle needs no inline script or style).
    staticCSP: DOCS_CSP,
    // Swagger UI would otherwise send the document to validator.swagger.io for its badge.
    uiConfig: { url: '/api/v1/openapi.json', deepLinking: true, tryItOutEnabled: true, validatorUrl: null },
  });
}
