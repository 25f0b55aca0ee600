# The redirector service. Build from the repository root:
#   docker build -f docker/redirector.Dockerfile -t deeplink-redirector .
FROM node:20-bookworm-slim AS deps
WORKDIR /app
# Only manifests first, so the dependency layer is cached until they change.
COPY package.json package-lock.json ./
COPY packages/core/package.json packages/core/
COPY packages/client/package.json packages/client/
COPY services/api/package.json services/api/
COPY services/redirector/package.json services/redirector/
COPY services/worker/package.json services/worker/
COPY loadtest/package.json loadtest/
RUN npm ci --no-audit --no-fund --workspace services/redirector --include-workspace-root

FROM node:20-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY package.json tsconfig.json ./
COPY packages/core packages/core
COPY services/redirector services/redirector
USER node
EXPOSE 8080
CMD ["node", "--import", "tsx", "services/redirector/src/main.ts"]
