/** The public downloads change only with a deployment; five minutes of caching is safe. */
export const PUBLIC_DOWNLOAD_CACHE = 'public, max-age=300';
