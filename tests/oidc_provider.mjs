// A real OpenID Connect provider (node-oidc-provider) on loopback, for the single sign-on tests (tests/oidc.py).
//
//   node tests/oidc_provider.mjs CONFIG.json
//
// CONFIG.json: {"port": 9201, "client_id": "...", "client_secret": "...", "redirect_uri": "...",
//               "accounts": "ACCOUNTS.json"}
// ACCOUNTS.json maps a login name to its claims, e.g. {"lena": {"email": "...", "groups": ["leads"]}};
// it is read at every sign-in, so a test changes a person's groups by rewriting it. The login form is
// the library's development form (any password); consent is given by the provider itself (below).
// Prints "listening <issuer>" once it serves.
import { readFileSync } from "node:fs";
import { generateKeyPair, exportJWK } from "jose";
import Provider from "oidc-provider";

const config = JSON.parse(readFileSync(process.argv[2], "utf8"));
const issuer = `http://127.0.0.1:${config.port}`;
const readAccounts = () => JSON.parse(readFileSync(config.accounts, "utf8"));

const { privateKey } = await generateKeyPair("RS256", { extractable: true });
const signingKey = { ...(await exportJWK(privateKey)), kid: "test-key", alg: "RS256", use: "sig" };

const provider = new Provider(issuer, {
  clients: [{
    client_id: config.client_id,
    client_secret: config.client_secret,
    redirect_uris: [config.redirect_uri],
    response_types: ["code"],
    grant_types: ["authorization_code"],
    token_endpoint_auth_method: "client_secret_post",
  }],
  jwks: { keys: [signingKey] },
  cookies: { keys: ["tests-only-cookie-key"] },
  claims: { openid: ["sub"], email: ["email", "email_verified"], profile: ["name", "preferred_username"],
            groups: ["groups"] },
  scopes: ["openid", "email", "profile", "groups"],
  // PKCE on every authorization request: a product that did not send a code challenge would be refused.
  pkce: { required: () => true },
  features: { devInteractions: { enabled: true } },
  // The product is this provider's own first-party client: no consent screen, every requested scope granted.
  async loadExistingGrant(ctx) {
    const grant = new provider.Grant({ clientId: ctx.oidc.client.clientId, accountId: ctx.oidc.session.accountId });
    grant.addOIDCScope(ctx.oidc.params.scope);
    await grant.save();
    return grant;
  },
  async findAccount(ctx, id) {
    const account = readAccounts()[id];
    if (!account) return undefined;
    return {
      accountId: id,
      async claims() {
        const current = readAccounts()[id] || {};  // the groups as the test last wrote them
        return { sub: id, preferred_username: id, email_verified: true, ...current };
      },
    };
  },
});

// What went wrong at the provider, in its log (tests/oidc.py shows it when a sign-in fails).
for (const event of ["server_error", "authorization.error", "grant.error", "userinfo.error"]) {
  provider.on(event, (ctx, error) => console.error(`${event}: ${error.message} ${error.error_description || ""}`));
}

provider.listen(config.port, "127.0.0.1", () => console.log(`listening ${issuer}`));
