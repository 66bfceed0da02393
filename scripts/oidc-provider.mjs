// An OpenID Connect provider for the OAUTHBEARER tests: panva's oidc-provider (npm), installed
// and started by scripts/kafka-secure, which passes its settings in the environment:
//
//   OIDC_PROVIDER_MODULE  path of the installed package's entry (lib/index.js)
//   OIDC_PORT             port on 127.0.0.1; the issuer is http://127.0.0.1:OIDC_PORT
//   OIDC_KEY_FILE         the signing key (a private RSA JWK); made on the first start and reused,
//                         so a restarted provider keeps the JWKS the broker cached
//   OIDC_TOKEN_TTL        access token lifetime in seconds
//   OIDC_CLIENTS          client_id:client_secret pairs, space-separated
//   OIDC_TLS_PORT         optional: the same endpoints over HTTPS on this port, with
//   OIDC_TLS_CERT         the server certificate chain (PEM) and
//   OIDC_TLS_KEY          its key (PEM, not encrypted)
//
// Only the client-credentials grant is enabled, with client_secret_basic client
// authentication (what Kafka's OAuthBearerLoginCallbackHandler sends). Every access token is a
// JWT (RFC 9068) signed with RS256: `sub` is the client id (the Kafka principal), `scope` the
// granted scopes (`kafka` when asked for), `aud` is `kafka`. Endpoints: POST /token, GET /jwks,
// GET /.well-known/openid-configuration.
import { generateKeyPairSync } from 'node:crypto';
import { existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createServer } from 'node:https';
import { pathToFileURL } from 'node:url';

const env = (name) => {
  const v = process.env[name];
  if (!v) {
    console.error(`oidc-provider: ${name} is not set`);
    process.exit(2);
  }
  return v;
};

const { default: Provider } = await import(pathToFileURL(env('OIDC_PROVIDER_MODULE')).href);
const port = Number(env('OIDC_PORT'));
const keyFile = env('OIDC_KEY_FILE');
const ttl = Number(env('OIDC_TOKEN_TTL'));
const clients = env('OIDC_CLIENTS')
  .split(/\s+/)
  .filter(Boolean)
  .map((pair) => {
    const i = pair.indexOf(':');
    return {
      client_id: pair.slice(0, i),
      client_secret: pair.slice(i + 1),
      grant_types: ['client_credentials'],
      response_types: [],
      redirect_uris: [],
      token_endpoint_auth_method: 'client_secret_basic',
      scope: 'kafka',
    };
  });

if (!existsSync(keyFile)) {
  const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
  const jwk = { ...privateKey.export({ format: 'jwk' }), kid: `tributary-${Date.now()}`, use: 'sig', alg: 'RS256' };
  writeFileSync(`${keyFile}.tmp`, JSON.stringify(jwk), { mode: 0o600 });
  renameSync(`${keyFile}.tmp`, keyFile);
}
const key = JSON.parse(readFileSync(keyFile, 'utf8'));

const issuer = `http://127.0.0.1:${port}`;
const provider = new Provider(issuer, {
  clients,
  jwks: { keys: [key] },
  scopes: ['kafka'],
  cookies: { keys: ['tributary-tests-only'] },
  features: {
    devInteractions: { enabled: false },
    clientCredentials: { enabled: true },
    introspection: { enabled: false },
    revocation: { enabled: false },
    resourceIndicators: {
      enabled: true,
      // Kafka's client sends no `resource` parameter: every token is for the Kafka cluster.
      defaultResource: async () => 'urn:tributary:kafka',
      getResourceServerInfo: async () => ({
        scope: 'kafka',
        audience: 'kafka',
        accessTokenTTL: ttl,
        accessTokenFormat: 'jwt',
        jwt: { sign: { alg: 'RS256' } },
      }),
    },
  },
  ttl: { ClientCredentials: ttl },
});
provider.on('server_error', (_ctx, err) => console.error('oidc-provider: server error', err));
provider.on('grant.error', (_ctx, err) => console.error(`oidc-provider: token request refused: ${err.message} (${err.error_description ?? ''})`));
provider.on('client_credentials.issued', (token) => {
  console.log(`oidc-provider: issued an access token to ${token.clientId}, ${ttl} s`);
});

const listening = (server, url) =>
  new Promise((resolve) => {
    server.on('listening', () => resolve(url));
    server.on('error', (e) => {
      console.error(`oidc-provider: ${url}: ${e.message}`);
      process.exit(1);
    });
  });
const urls = [listening(provider.listen(port, '127.0.0.1'), issuer)];
if (process.env.OIDC_TLS_PORT) {
  const tls = createServer(
    { cert: readFileSync(env('OIDC_TLS_CERT')), key: readFileSync(env('OIDC_TLS_KEY')) },
    provider.callback(),
  );
  tls.listen(Number(process.env.OIDC_TLS_PORT), '127.0.0.1');
  urls.push(listening(tls, `https://127.0.0.1:${process.env.OIDC_TLS_PORT}`));
}
console.log(`oidc-provider: ready on ${(await Promise.all(urls)).join(' and ')} (tokens live ${ttl} s)`);
// Nothing to save: exit at once (closing the server would wait for keep-alive connections).
for (const signal of ['SIGTERM', 'SIGINT']) {
  process.on(signal, () => process.exit(0));
}
