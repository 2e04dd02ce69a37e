// The authorization server's pages: sign-in with the application's session, consent, and
// errors. Server-rendered HTML without scripts or external assets; every value written into a
// page is HTML-escaped; the one style sheet is allowed by its hash, nothing else by the CSP.
import { createHash } from 'node:crypto';

export function escapeHtml(value: unknown): string {
  return String(value).replace(/[&<>"']/g, (character) => `&#${character.charCodeAt(0)};`);
}

const STYLE = `body{font:16px/1.5 system-ui,sans-serif;margin:0;background:#f4f5f7;color:#1d2430}
main{max-width:34rem;margin:3rem auto;background:#fff;border-radius:8px;padding:2rem;box-shadow:0 1px 3px rgba(0,0,0,.15)}
h1{font-size:1.35rem;margin-top:0}ul{list-style:none;padding:0}li{margin:.75rem 0}
label{display:flex;gap:.6rem;align-items:flex-start}code{font-size:.85rem;color:#5a6372}
.scope-description{display:block}textarea{width:100%;box-sizing:border-box;font:13px monospace}
.actions{display:flex;gap:1rem;margin-top:1.5rem}button{font:inherit;padding:.5rem 1.2rem;border-radius:6px;border:1px solid #8a93a3;background:#fff;cursor:pointer}
button.primary{background:#2456d3;border-color:#2456d3;color:#fff}.error{color:#a4161a}.note{color:#5a6372;font-size:.9rem}`;

const STYLE_HASH = createHash('sha256').update(STYLE).digest('base64');

/**
 * No scripts, no external anything, no framing; forms may post anywhere because Chrome applies
 * `form-action` to the redirect that follows an approval, which ends at the client's redirect URI.
 */
export const PAGE_HEADERS: Readonly<Record<string, string>> = Object.freeze({
  'content-type': 'text/html; charset=utf-8',
  'cache-control': 'no-store',
  'content-security-policy': `default-src 'none'; style-src 'sha256-${STYLE_HASH}'; base-uri 'none'; frame-ancestors 'none'`,
  'x-frame-options': 'DENY',
  'x-content-type-options': 'nosniff',
  'referrer-policy': 'no-referrer',
});

function page(title: string, body: string): string {
  return `<!doctype html>
<html lang="en">
<head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1"><title>${escapeHtml(title)}</title><style>${STYLE}</style></head>
<body><main>
${body}
</main></body>
</html>
`;
}

export interface ScopeWording {
  scope: string;
  description: string;
}

export interface ConsentPageInput {
  action: string;
  csrf: string;
  clientName: string;
  clientId: string;
  userLabel: string;
  workspaceName: string;
  scopes: readonly ScopeWording[];
}

/** The scopes the client asks for, each ticked; the user may untick some and approve the rest, or deny. */
export function consentPage(input: ConsentPageInput): string {
  const items = input.scopes
    .map(
      ({ scope, description }) =>
        `<li><label><input type="checkbox" name="scope" value="${escapeHtml(scope)}" checked>` +
        `<span><span class="scope-description">${escapeHtml(description)}</span><code>${escapeHtml(scope)}</code></span></label></li>`,
    )
    .join('\n');
  return page(
    `Authorize ${input.clientName}`,
    `<h1><span id="client-name">${escapeHtml(input.clientName)}</span> wants to access your workspace</h1>
<p>Signed in as <strong>${escapeHtml(input.userLabel)}</strong> in <strong>${escapeHtml(input.workspaceName)}</strong>.
The application <code>${escapeHtml(input.clientId)}</code> asks to:</p>
<form method="post" action="${escapeHtml(input.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(input.csrf)}">
<ul id="scopes">
${items}
</ul>
<p class="note">Untick what you do not want to allow. You can take access back later: ask an administrator to delete the application, or revoke its tokens.</p>
<div class="actions"><button class="primary" type="submit" name="decision" value="allow">Allow</button>
<button type="submit" name="decision" value="deny">Deny</button></div>
</form>`,
  );
}

/** The client belongs to another workspace: the user cannot authorize it and can only go back. */
export function otherWorkspacePage(input: { action: string; csrf: string; clientName: string; userLabel: string; workspaceName: string }): string {
  return page(
    'Application of another workspace',
    `<h1>${escapeHtml(input.clientName)} belongs to another workspace</h1>
<p>You are signed in as <strong>${escapeHtml(input.userLabel)}</strong> in <strong>${escapeHtml(input.workspaceName)}</strong>,
and this application was registered for a different workspace. Only users of that workspace can authorize it.</p>
<form method="post" action="${escapeHtml(input.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(input.csrf)}">
<div class="actions"><button type="submit" name="decision" value="deny">Back to the application</button></div>
</form>`,
  );
}

/** Sign-in with a session token of the application (the application's own front end would set it). */
export function signInPage(input: { action: string; csrf: string; returnTo: string; error?: string }): string {
  return page(
    'Sign in',
    `<h1>Sign in to authorize an application</h1>
${input.error ? `<p class="error" role="alert">${escapeHtml(input.error)}</p>` : ''}
<form method="post" action="${escapeHtml(input.action)}">
<input type="hidden" name="csrf" value="${escapeHtml(input.csrf)}">
<input type="hidden" name="return_to" value="${escapeHtml(input.returnTo)}">
<p><label for="session_token">Session token of the application</label></p>
<textarea id="session_token" name="session_token" rows="5" required autocomplete="off" spellcheck="false"></textarea>
<p class="note">An administrator mints one with <code>npm run admin -- session create --user &lt;user id&gt;</code>.</p>
<div class="actions"><button class="primary" type="submit">Sign in</button></div>
</form>`,
  );
}

export function errorPage(title: string, message: string): string {
  return page(title, `<h1>${escapeHtml(title)}</h1>\n<p>${escapeHtml(message)}</p>`);
}
