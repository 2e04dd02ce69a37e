// Every HTML field of a portfolio (post and outcome `bodyHtml`, `richText` page blocks) passes
// through here when it is imported, so that what is stored and served is already safe and reads
// never sanitize. The allowlist is explicit rather than sanitize-html's defaults, so an upgrade
// of the library cannot widen it.
import sanitize from 'sanitize-html';

/** Tags kept; anything else is dropped (its text kept, except for the tags in `droppedWithContent`). */
export const allowedTags = [
  'p', 'br', 'hr',
  'h2', 'h3', 'h4', 'h5', 'h6',
  'strong', 'em', 'b', 'i', 'u', 's', 'code', 'pre', 'blockquote',
  'ul', 'ol', 'li',
  'a', 'img', 'figure', 'figcaption',
  'table', 'thead', 'tbody', 'tfoot', 'tr', 'th', 'td', 'caption',
] as const;

/** Dropped together with everything inside them, text included. */
export const droppedWithContent = [
  'script', 'style', 'textarea', 'option', 'select', 'noscript', 'noembed', 'noframes', 'template',
  'title', 'xmp', 'iframe', 'frame', 'frameset', 'object', 'embed', 'applet', 'svg', 'math', 'head',
] as const;

/** The `rel` every kept link gets: the content is someone else's, never vouched for. */
export const linkRel = 'nofollow noopener noreferrer';

const positiveInteger = /^[1-9][0-9]{0,4}$/;

/**
 * Only absolute addresses survive: served HTML is shown on sites we do not know, where relative
 * and protocol-relative forms (`//host`, `/\\host`) would resolve somewhere unintended.
 * sanitize-html checks the scheme again afterwards (after stripping control characters).
 */
function absoluteUrl(value: string | undefined, schemes: RegExp): string | undefined {
  if (value === undefined || !schemes.test(value) || !URL.canParse(value)) return undefined;
  return value;
}
const linkSchemes = /^(?:https?:\/\/|mailto:)/i;
const imageSchemes = /^https?:\/\//i;

const options: sanitize.IOptions = {
  allowedTags: [...allowedTags],
  nonTextTags: [...droppedWithContent],
  disallowedTagsMode: 'discard',
  allowedAttributes: {
    a: ['href', 'title', 'rel'],
    img: ['src', 'alt', 'width', 'height'],
    th: ['colspan', 'rowspan', 'scope'],
    td: ['colspan', 'rowspan'],
  },
  allowedClasses: {},
  // No element may keep a `style` attribute. Should anyone add `style` to allowedAttributes,
  // this pairing (an allowedStyles object without style parsing) makes sanitize-html throw
  // instead of passing the CSS through unfiltered.
  allowedStyles: {},
  allowedSchemes: ['http', 'https', 'mailto'],
  allowedSchemesByTag: { img: ['http', 'https'] },
  allowedSchemesAppliedToAttributes: ['href', 'src', 'cite'],
  allowProtocolRelative: false,
  allowedIframeHostnames: [],
  allowedScriptHostnames: [],
  allowVulnerableTags: false,
  enforceHtmlBoundary: false,
  parseStyleAttributes: false,
  transformTags: {
    // The page or post title is the document's h1; a heading inside the body moves one level down.
    h1: 'h2',
    // Rebuilt from scratch so that the output does not depend on the input's attribute order,
    // which keeps sanitizing idempotent (export → import → export is byte-identical).
    a: (tagName, attribs) => {
      const kept: sanitize.Attributes = {};
      const href = absoluteUrl(attribs.href, linkSchemes);
      if (href !== undefined) kept.href = href;
      if (attribs.title !== undefined) kept.title = attribs.title;
      kept.rel = linkRel;
      return { tagName, attribs: kept };
    },
    img: (tagName, attribs) => {
      const kept: sanitize.Attributes = {};
      const src = absoluteUrl(attribs.src, imageSchemes);
      if (src !== undefined) kept.src = src;
      kept.alt = attribs.alt ?? '';
      if (attribs.width !== undefined && positiveInteger.test(attribs.width)) kept.width = attribs.width;
      if (attribs.height !== undefined && positiveInteger.test(attribs.height)) kept.height = attribs.height;
      return { tagName, attribs: kept };
    },
  },
  // An image whose source was removed (unsafe scheme) is worthless; drop the element.
  exclusiveFilter: (frame) => frame.tag === 'img' && !frame.attribs.src,
};

/** Returns HTML containing only allowlisted tags, attributes and URL schemes. */
export function sanitizeHtml(html: string): string {
  return sanitize(html, options);
}
