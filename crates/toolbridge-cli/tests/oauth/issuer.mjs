// A real OAuth 2.1 authorization server for the gateway's tests: panva's
// oidc-provider (from .deps/oidc, $OIDC_DEPS), issuing JWT access tokens by
// the client_credentials grant with resource indicators (RFC 8707): a token
// for resource R has `aud` R. Prints `LISTENING <port>` once it listens.
//
// Test-only routes beside the provider's own:
// - POST /test/rotate: a new signing key replaces the old one (a new `kid`;
//   the old key is no longer published), as an issuer rotating its key.
// - GET /test/stats: {"jwksFetches": N}, how often the key set was fetched.
// - POST /test/forge {aud, expSecs, unpublished}: a JWT with the issuer's
//   claims signed by the current key (or, with `unpublished`, by a key the
//   issuer never published), `exp` `expSecs` from now (negative: expired).
//   The provider itself never issues an expired token, and no token signed
//   by a stranger; these are what the gateway must refuse.
import http from 'node:http';
import path from 'node:path';
import { pathToFileURL } from 'node:url';

const deps = process.env.OIDC_DEPS;
const load = (p) => import(pathToFileURL(path.join(deps, 'node_modules', p)).href);
const { default: Provider } = await load('oidc-provider/lib/index.js');
const jose = await load('jose/dist/webapi/index.js');

const port = Number(process.env.PORT || 0);
const clientSecret = process.env.CLIENT_SECRET || 'test-secret';
let generation = 0;

async function newKey() {
  generation += 1;
  const { privateKey } = await jose.generateKeyPair('RS256', { extractable: true });
  const jwk = await jose.exportJWK(privateKey);
  return { ...jwk, kid: `key-${generation}-${Date.now()}`, alg: 'RS256', use: 'sig' };
}

function makeProvider(issuer, key) {
  const provider = new Provider(issuer, {
    clients: [{
      client_id: 'gateway-client',
      client_secret: clientSecret,
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_post',
      scope: 'tools.read tools.write',
    }, {
      // The TypeScript SDK's ClientCredentialsProvider authenticates with
      // HTTP Basic.
      client_id: 'sdk-client',
      client_secret: 'sdk-secret',
      grant_types: ['client_credentials'],
      redirect_uris: [],
      response_types: [],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: 'tools.read tools.write',
    }],
    jwks: { keys: [key] },
    scopes: ['tools.read', 'tools.write', 'offline_access'],
    features: {
      // The provider's own login and consent pages (any login is taken),
      // and dynamic client registration: what `toolbridge auth login`
      // walks through with its $BROWSER.
      devInteractions: { enabled: true },
      registration: { enabled: true },
      clientCredentials: { enabled: true },
      resourceIndicators: {
        enabled: true,
        defaultResource: () => undefined,
        useGrantedResource: () => true,
        getResourceServerInfo: (_ctx, resource) => ({
          scope: 'tools.read tools.write',
          audience: resource,
          accessTokenFormat: 'jwt',
          accessTokenTTL: 300,
          jwt: { sign: { alg: 'RS256' } },
        }),
      },
    },
  });
  provider.proxy = false;
  return provider;
}

let issuer;
let key;
let provider;
let callback;

let jwksFetches = 0;

const server = http.createServer(async (req, res) => {
  if (req.method === 'GET' && req.url === '/test/stats') {
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ jwksFetches }));
    return;
  }
  if (req.url.startsWith('/jwks')) jwksFetches += 1;
  if (req.method === 'POST' && req.url === '/test/rotate') {
    key = await newKey();
    provider = makeProvider(issuer, key);
    callback = provider.callback();
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ kid: key.kid }));
    return;
  }
  if (req.method === 'POST' && req.url === '/test/forge') {
    let body = '';
    for await (const chunk of req) body += chunk;
    const ask = JSON.parse(body || '{}');
    const signer = ask.unpublished ? await newUnpublished() : key;
    const now = Math.floor(Date.now() / 1000);
    const token = await new jose.SignJWT({ scope: 'tools.read', client_id: 'gateway-client' })
      .setProtectedHeader({ alg: 'RS256', kid: signer.kid, typ: 'at+jwt' })
      .setIssuer(issuer)
      .setSubject('forged')
      .setAudience(ask.aud)
      .setIssuedAt(now - 600)
      .setExpirationTime(now + (ask.expSecs ?? 300))
      .sign(await jose.importJWK(signer, 'RS256'));
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ token }));
    return;
  }
  callback(req, res);
});

async function newUnpublished() {
  const { privateKey } = await jose.generateKeyPair('RS256', { extractable: true });
  const jwk = await jose.exportJWK(privateKey);
  return { ...jwk, kid: 'stranger', alg: 'RS256' };
}

server.listen(port, '127.0.0.1', async () => {
  const bound = server.address().port;
  issuer = `http://127.0.0.1:${bound}`;
  key = await newKey();
  provider = makeProvider(issuer, key);
  callback = provider.callback();
  console.log(`LISTENING ${bound}`);
});
