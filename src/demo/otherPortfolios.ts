// The two other demo tenants: Jonas Feld (a published portfolio with different content, including
// a post slug only he has) and Priya Raman (a portfolio that exists but is not published).
import type { PortfolioDocumentInput } from '../portfolio/import/importFormat.js';

const jonasMedia = 'https://media.example.com/jonas-feld';

/** A post slug that only the second demo tenant has. */
export const otherTenantOnlyPostSlug = 'small-multiples-in-practice';

export const jonasFeldPortfolio: PortfolioDocumentInput = {
  formatVersion: 1,
  published: true,
  profile: {
    name: 'Jonas Feld',
    headline: 'Data visualization engineer',
    bioSummary:
      'I turn messy datasets into charts people can read at a glance. Previously at a newsroom graphics desk, now building analytics dashboards for climate and energy companies.',
    location: 'Berlin, Germany',
    avatar: 'ast_jonasAvatar',
  },
  assets: [
    { id: 'ast_jonasAvatar', url: `${jonasMedia}/avatar.jpg`, altText: 'Jonas Feld', mimeType: 'image/jpeg', width: 600, height: 600 },
    { id: 'ast_gridCover', url: `${jonasMedia}/outcomes/grid-dashboard.png`, altText: 'Dashboard of grid load by region', mimeType: 'image/png', width: 1600, height: 1000 },
    { id: 'ast_multiplesCover', url: `${jonasMedia}/posts/small-multiples.png`, altText: 'Twelve small line charts of monthly temperatures', mimeType: 'image/png', width: 1200, height: 630 },
  ],
  outcomes: [
    {
      slug: 'grid-load-dashboard',
      published: true,
      title: 'A grid-load dashboard operators trust',
      summary: 'Real-time load and forecast for twelve regions on one screen, designed with the control-room team.',
      client: 'Nordlicht Energie',
      metrics: [
        { label: 'Time to spot an anomaly', value: '4 min → 40 s' },
        { label: 'Charts on the main screen', value: '31 → 12' },
      ],
      bodyHtml: '<p>We replaced thirty-one charts with twelve small multiples sharing one scale, so an unusual region stands out without reading a single axis.</p>',
      coverImage: 'ast_gridCover',
      tags: ['energy', 'dashboards'],
    },
    {
      slug: 'election-night-graphics',
      published: true,
      title: 'Election-night graphics for 4 million readers',
      summary: 'Live results maps and seat projections that stayed fast under peak traffic.',
      client: 'Berliner Tagesblatt',
      metrics: [{ label: 'Peak concurrent readers', value: '410,000' }],
      bodyHtml: '<p>Pre-rendered SVG maps updated with a few kilobytes of JSON every thirty seconds kept the page fast when traffic peaked at 22:00.</p>',
      coverImage: null,
      tags: ['news', 'maps'],
    },
  ],
  posts: [
    {
      slug: otherTenantOnlyPostSlug,
      published: true,
      title: 'Small multiples in practice',
      excerpt: 'When one chart with twelve lines becomes twelve charts with one line each, and why readers thank you for it.',
      bodyHtml: '<p>A spaghetti chart asks the reader to untangle it. Small multiples do the untangling for them: same scale, same axes, one series per panel.</p>',
      coverImage: 'ast_multiplesCover',
      tags: ['dataviz', 'charts'],
      publishedAt: '2025-02-20T07:30:00+01:00',
    },
    {
      slug: 'choosing-a-colour-scale',
      published: true,
      title: 'Choosing a colour scale',
      excerpt: 'Sequential, diverging or categorical: a decision tree, with the mistakes I have made in each branch.',
      bodyHtml: '<p>Use a sequential scale for amounts, a diverging one when there is a meaningful midpoint, and a categorical one only for unordered groups. Then test it in greyscale.</p>',
      tags: ['dataviz', 'color'],
      publishedAt: '2024-11-05T08:00:00+01:00',
      updatedAt: '2024-11-06T10:15:00+01:00',
    },
    {
      slug: 'annotating-charts',
      published: false,
      title: 'Annotating charts (draft)',
      excerpt: 'Draft.',
      bodyHtml: '<p>Draft.</p>',
      publishedAt: '2024-10-01T08:00:00+02:00',
    },
  ],
  pages: [
    {
      slug: 'about',
      published: true,
      title: 'About Jonas',
      description: 'Background and current work.',
      blocks: [
        { type: 'heading', level: 1, text: 'About' },
        { type: 'richText', html: '<p>Eight years of data graphics, first in a newsroom, now for energy and climate companies.</p>' },
        { type: 'callToAction', label: 'Email me', url: 'mailto:jonas@feld.example.com' },
      ],
    },
  ],
  experience: [
    {
      id: 'exp_jonasNordlicht',
      published: true,
      organization: 'Nordlicht Energie',
      role: 'Data visualization engineer',
      location: 'Berlin, Germany',
      startDate: '2021-01-01',
      endDate: null,
      summary: 'Dashboards for grid operators and energy traders.',
      highlights: ['Grid-load dashboard used in the control room around the clock'],
    },
    {
      id: 'exp_jonasTagesblatt',
      published: true,
      organization: 'Berliner Tagesblatt',
      role: 'Graphics editor',
      location: 'Berlin, Germany',
      startDate: '2016-03-01',
      endDate: '2020-12-31',
      summary: 'Interactive graphics for elections, climate and economy stories.',
      highlights: [],
    },
  ],
  skills: [
    { id: 'skl_jonasD3', published: true, name: 'D3.js', category: 'Engineering', level: 'expert', tags: ['dataviz'] },
    { id: 'skl_jonasPython', published: true, name: 'Python', category: 'Engineering', level: 'advanced', tags: ['data'] },
  ],
  stats: [{ id: 'sta_jonasCharts', published: true, label: 'Charts published', value: 640, unit: null, description: 'Newsroom and product work since 2016.' }],
  awards: [],
  education: [
    { id: 'crd_jonasBsc', published: true, kind: 'education', title: 'BSc in Computer Science', institution: 'TU Berlin', startDate: '2011-10-01', endDate: '2015-09-30', url: null, description: null },
  ],
  testimonials: [],
  links: [
    { id: 'lnk_jonasWebsite', published: true, kind: 'website', label: 'feld.example.com', url: 'https://feld.example.com' },
    { id: 'lnk_jonasGithub', published: true, kind: 'github', label: 'GitHub', url: 'https://github.com/jonasfeld-example' },
  ],
};

/** A tenant whose portfolio exists but is not published: every data operation answers 404. */
export const priyaRamanPortfolio: PortfolioDocumentInput = {
  formatVersion: 1,
  published: false,
  profile: {
    name: 'Priya Raman',
    headline: 'Service designer',
    bioSummary: 'Portfolio in progress.',
    location: 'Manchester, United Kingdom',
    avatar: null,
  },
  assets: [],
  outcomes: [
    {
      slug: 'gp-appointment-booking',
      published: true,
      title: 'Booking a GP appointment without the 8 a.m. phone queue',
      summary: 'Draft case study.',
      bodyHtml: '<p>Draft.</p>',
    },
  ],
  posts: [
    {
      slug: 'service-blueprints-for-small-teams',
      published: true,
      title: 'Service blueprints for small teams',
      excerpt: 'Draft.',
      bodyHtml: '<p>Draft.</p>',
      publishedAt: '2025-01-10T09:00:00Z',
    },
  ],
  pages: [{ slug: 'about', published: true, title: 'About', blocks: [{ type: 'richText', html: '<p>Coming soon.</p>' }] }],
  links: [{ id: 'lnk_priyaEmail', published: true, kind: 'email', label: 'Email', url: 'mailto:priya@raman.example.com' }],
};
