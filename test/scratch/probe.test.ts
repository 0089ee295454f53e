import { test } from 'node:test';
import { describeEachBackend, bearer } from '../helpers/app.ts';

describeEachBackend('probe', (ctx) => {
  test('probe', async () => {
    const t = await ctx().token();
    const show = (label: string, r: { statusCode: number; body: string; headers: Record<string, unknown> }) => console.log(label, r.statusCode, r.body.slice(0, 300), r.headers['allow'] ?? '');
    show('nul client', await ctx().inject({ method: 'POST', url: '/api/v1/auth/token', payload: { client_id: 'a\u0000b', client_secret: 'x' } }));
    show('nul name', await ctx().inject({ method: 'POST', url: '/api/v1/keys', headers: bearer(t), payload: { name: 'a\u0000b', scopes: ['keys:read'] } }));
    show('nul param', await ctx().inject({ method: 'DELETE', url: '/api/v1/keys/a%00b', headers: bearer(t) }));
    show('long param', await ctx().inject({ method: 'DELETE', url: '/api/v1/keys/' + 'k'.repeat(200), headers: bearer(t) }));
    show('trailing', await ctx().inject({ method: 'GET', url: '/api/v1/keys/', headers: bearer(t) }));
    show('bad cursor', await ctx().inject({ method: 'GET', url: '/api/v1/keys?cursor=zzz', headers: bearer(t) }));
    show('role', await ctx().inject({ method: 'POST', url: '/api/v1/keys', headers: bearer(t), payload: { name: 'a', scopes: ['nope'], role: 'god' } }));
    show('bad url', await ctx().inject({ method: 'GET', url: '/api/v1/keys/%E0%A4%A', headers: bearer(t) }));
    show('proto', await ctx().inject({ method: 'POST', url: '/api/v1/keys', headers: { ...bearer(t), 'content-type': 'application/json' }, payload: '{"__proto__": {"x": 1}, "name": "a", "scopes": ["keys:read"]}' }));
    show('grant', await ctx().inject({ method: 'POST', url: '/api/v1/auth/token', payload: 'grant_type=password&client_id=a&client_secret=b', headers: { 'content-type': 'application/x-www-form-urlencoded' } }));
    show('charset', await ctx().inject({ method: 'POST', url: '/api/v1/keys', headers: { ...bearer(t), 'content-type': 'application/json; charset=latin1' }, payload: '{}' }));
    show('text', await ctx().inject({ method: 'POST', url: '/api/v1/keys', headers: { ...bearer(t), 'content-type': 'text/plain' }, payload: '{}' }));
    show('ct none', await ctx().inject({ method: 'POST', url: '/api/v1/keys', headers: { ...bearer(t) }, payload: Buffer.from('{}') }));
    show('docs', await ctx().inject({ method: 'GET', url: '/docs' }));
    show('head', await ctx().inject({ method: 'HEAD', url: '/healthz' }));
    show('options', await ctx().inject({ method: 'OPTIONS', url: '/api/v1/keys' }));
  });
});
