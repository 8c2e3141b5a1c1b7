# One image for every role: `countersign serve`, `countersign worker`, `countersign agent`.
# Node 24 LTS (package.json "engines"). The build stage compiles dist/ (bin/build.js: esbuild, the
# Temporal workflow bundle, the migrations); the image keeps the production dependencies only and
# runs the compiled code (COUNTERSIGN_RUN=dist: it refuses to start from a build that does not
# match the sources beside it).
FROM node:24-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm install --no-audit --no-fund
COPY . .
# The lock file is one of the build's inputs (the workflow bundle holds SDK code): keep it as built.
RUN npm run build \
 && cp package-lock.json /tmp/package-lock.json \
 && npm prune --omit=dev --no-audit --no-fund \
 && cp /tmp/package-lock.json package-lock.json \
 && npm cache clean --force

FROM node:24-bookworm-slim
WORKDIR /app
ENV NODE_ENV=production COUNTERSIGN_RUN=dist
COPY --from=build /app ./
USER node
EXPOSE 3000
# Health checks run `node bin/healthcheck.js URL` (the slim image has no curl): the API's is
# http://127.0.0.1:3000/readyz, the worker's its WORKER_HTTP_PORT's /readyz (docker-compose.yml).
# None here: one image runs serve, worker and agent, each probed differently.
# The V8 flags of cli/node-flags.ts, which bound the young generation and how far the old one
# grows between full collections (docs/operations.md, "Memory").
ENTRYPOINT ["node", "--max-semi-space-size=8", "--heap-growing-percent=50", "bin/countersign.js"]
CMD ["serve"]
