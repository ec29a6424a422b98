# syntax=docker/dockerfile:1
# The image `npm run image` (scripts/build-image.mjs) builds without Docker, for people with
# Docker: same Node (the version package-lock.json pins for the devDependency `node`), same
# files under /app (src compiled once with tsc; production dependencies pruned by
# scripts/prune-deps.mjs), same user, entrypoint and environment, no npm, shell or compiler in
# the runtime stage. The base differs only in origin: distroless's cc image is the same Debian
# 12 glibc/libstdc++ set (plus CA certificates and tzdata) that the script extracts itself.
ARG NODE_VERSION=24.21.0

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN node node_modules/typescript/bin/tsc -p tsconfig.build.json --outDir /app/dist \
 && cd src && find . -type f ! -name '*.ts' -exec cp --parents {} /app/dist/ \;

FROM node:${NODE_VERSION}-bookworm-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/prune-deps.mjs /tmp/prune-deps.mjs
RUN npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && rm -f node_modules/.package-lock.json \
 && node /tmp/prune-deps.mjs /app

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /usr/local/bin/node /usr/local/bin/node
COPY --from=deps /app/node_modules /app/node_modules
COPY --from=build /app/dist /app/dist
COPY package.json /app/package.json
COPY crds /app/crds
# MALLOC_ARENA_MAX: two glibc arenas, not eight per core, each keeping what its thread freed.
ENV PATH=/usr/local/bin:/usr/bin:/bin \
    NODE_ENV=production \
    NODE_OPTIONS=--enable-source-maps \
    MALLOC_ARENA_MAX=2
WORKDIR /app
# 65532 = "nonroot"; matches the chart's runAsUser/runAsGroup and owns nothing in /app.
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["/usr/local/bin/node", "/app/dist/cli/main.js"]
CMD ["controller"]
