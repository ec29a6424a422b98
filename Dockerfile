# syntax=docker/dockerfile:1
# The image `npm run image` (scripts/build-image.mjs) builds without Docker, for people with
# Docker. It holds the official Node binary (the version package-lock.json pins for the
# devDependency `node`) and, in /app, what scripts/bundle-app.mjs writes: the controller as one
# esbuild bundle with its source maps (dist/cli), the bundled packages' licenses
# (dist/THIRD-PARTY-NOTICES), package.json and crds. No node_modules: the controller's memory
# is otherwise mostly loaded dependency code it never runs. Same user, entrypoint and
# environment as the script's image; no npm, shell or compiler in the runtime stage. The base
# differs only in origin: distroless's cc image is the same Debian 12 glibc/libstdc++ set (plus
# CA certificates and tzdata) that the script extracts itself.
ARG NODE_VERSION=24.21.0

FROM node:${NODE_VERSION}-bookworm-slim AS build
WORKDIR /src
COPY package.json package-lock.json ./
RUN npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json ./
COPY scripts/bundle-app.mjs ./scripts/
COPY src ./src
COPY crds ./crds
RUN node scripts/bundle-app.mjs /app

FROM gcr.io/distroless/cc-debian12:nonroot
COPY --from=build /usr/local/bin/node /usr/local/bin/node
COPY --from=build /app /app
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
