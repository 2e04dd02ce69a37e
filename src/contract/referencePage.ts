// The HTML reference page of an API: a shell that loads the bundled Redoc renderer and the API's
// served openapi.json from this origin. The page holds no script of its own (the start-up script
// is a served asset), so its Content-Security-Policy can forbid inline scripts.

/** Where the HTTP adapter's asset handler serves the renderer and the script that starts it. */
export const REFERENCE_RENDERER_PATH = '/assets/redoc.standalone.js';
export const REFERENCE_INIT_PATH = '/assets/reference.js';

/** Scripts, connections, images and fonts from this origin; inline styles only because the renderer injects its CSS. */
export const REFERENCE_PAGE_POLICY =
  "default-src 'none'; script-src 'self'; style-src 'self' 'unsafe-inline'; img-src 'self' data:; font-src 'self' data:; connect-src 'self'; worker-src 'self' blob:; base-uri 'none'; form-action 'none'; frame-ancestors 'none'";

const escapeHtml = (text: string) => text.replace(/[&<>"']/g, (char) => `&#${char.charCodeAt(0)};`);

/** The page for the API whose served document is at `specPath` (a path on this origin, e.g. `/v1/openapi.json`). */
export function referencePageHtml(title: string, specPath: string): string {
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta name="viewport" content="width=device-width, initial-scale=1">
<title>${escapeHtml(title)} reference</title>
<link rel="icon" href="data:,">
</head>
<body>
<noscript>This reference is rendered by a script; the contract itself is at <a href="${escapeHtml(specPath)}">${escapeHtml(specPath)}</a>.</noscript>
<div id="reference" data-spec="${escapeHtml(specPath)}"></div>
<script src="${REFERENCE_RENDERER_PATH}"></script>
<script src="${REFERENCE_INIT_PATH}"></script>
</body>
</html>
`;
}
