# The API server for operators: the compiled build (npm run build) on Node 20, run by a user without
# privileges, the SQLite database and its generated key files on the volume /app/data. See docs/operations.md, "Production".
# Not built where it was written (no Docker engine there): every path it copies and every command it runs
# were checked outside Docker, in a scratch copy of the repository.

FROM node:20-bookworm-slim AS build
WORKDIR /app
# better-sqlite3 compiles from source when no prebuilt binary for this platform can be downloaded.
RUN apt-get update \
  && apt-get install -y --no-install-recommends python3 make g++ \
  && rm -rf /var/lib/apt/lists/*
COPY package.json package-lock.json ./
RUN npm ci --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
COPY db ./db
COPY generated ./generated
RUN npm run build && npm prune --omit=dev --no-audit --no-fund

FROM node:20-bookworm-slim
# MALLOC_ARENA_MAX=2 (as in npm start): glibc's default of up to 8 malloc arenas per core, one per
# thread that meets contention, leaves the analytics threads' freed memory resident (the
# noisy-neighbour bench, npm start: server RSS about 7 MB lower with one analytics thread).
ENV NODE_ENV=production \
    DATABASE_PATH=/app/data/app.db \
    MALLOC_ARENA_MAX=2
WORKDIR /app
# What the compiled server reads at run time: package.json (ESM, and where the project root is), the
# dependencies, the build, the served contract files, the migrations, the import schema, the build check.
COPY --from=build /app/package.json ./
COPY --from=build /app/node_modules ./node_modules
COPY --from=build /app/dist ./dist
COPY generated ./generated
COPY db/migrations ./db/migrations
COPY db/postgres/migrations ./db/postgres/migrations
COPY specs/portfolio/import-format.schema.json ./specs/portfolio/
COPY scripts/requireFreshBuild.mjs ./scripts/
# The database and the key files the server generates (session, cursor, webhook, OAuth) live here:
# keep the volume, or pass the keys as environment variables (docs/configuration.md).
RUN mkdir -p /app/data && chown node:node /app/data && chmod 700 /app/data
VOLUME ["/app/data"]
USER node
EXPOSE 3000
# /readyz (docs/operations.md, "Health and drain"): 200 while the database (and Redis, with REDIS_URL) answers and the
# server is not shutting down, outside the rate limits; node's fetch, as the slim image has no curl.
HEALTHCHECK --interval=10s --timeout=3s --start-period=30s --retries=3 \
  CMD ["node", "-e", "fetch(`http://127.0.0.1:${process.env.PORT || 3000}/readyz`).then((response) => process.exit(response.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM (docker stop) finishes open requests and webhook attempts, then exits; allow it 15 s (docker stop -t 20).
CMD ["node", "--max-semi-space-size=4", "--heap-growing-percent=50", "--import", "./scripts/requireFreshBuild.mjs", "dist/src/server.js"]
