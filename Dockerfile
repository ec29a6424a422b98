# syntax=docker/dockerfile:1
# Multi-stage: dependencies are installed (production only) in a build stage; the runtime
# stage has no npm cache, no build tools, and runs as an unprivileged user.
FROM node:24-slim AS deps
WORKDIR /app
COPY package.json package-lock.json ./
RUN npm ci --omit=dev --ignore-scripts && npm cache clean --force

FROM node:24-slim AS runtime
ENV NODE_ENV=production \
    NODE_OPTIONS=--enable-source-maps
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY bin ./bin
COPY src ./src
COPY crds ./crds
# 65532 = "nonroot" by convention; matches the chart's runAsUser, and owns nothing in /app.
USER 65532:65532
EXPOSE 8080
ENTRYPOINT ["node", "bin/azflex.mjs"]
CMD ["controller"]
