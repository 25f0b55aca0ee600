# The api service. Build from the repository root:
#   docker build -f docker/api.Dockerfile -t deeplink-api .
# The build stage bundles services/api/src/main.ts (with the @deeplink/core code it uses) into
# services/api/dist/main.js with esbuild and builds the dashboard's static files with Vite
# (scripts/build.mjs); the final image runs that bundle with plain node on the production
# dependencies alone (npm packages are not bundled), and serves the dashboard from
# services/dashboard/dist. No tsx or Vite at run time.
FROM node:22-bookworm-slim AS manifests
WORKDIR /app
# Only manifests first, so the dependency layers are cached until they change.
COPY package.json package-lock.json ./
COPY packages/core/package.json packages/core/
COPY packages/client/package.json packages/client/
COPY services/api/package.json services/api/
COPY services/redirector/package.json services/redirector/
COPY services/worker/package.json services/worker/
COPY services/dashboard/package.json services/dashboard/
COPY loadtest/package.json loadtest/

FROM manifests AS build
# npm's downloads are kept in a build cache across builds; an extra CA npm must trust (a TLS-
# intercepting proxy, README's Docker section) comes as the build secret `ca`, which no layer keeps.
# Every dependency, esbuild (a root devDependency) included.
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.npm \
    if [ -s /run/secrets/ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca; fi \
 && npm ci --no-audit --no-fund --workspace services/api --workspace services/dashboard --include-workspace-root
COPY tsconfig.json ./
COPY scripts/build.mjs scripts/
COPY packages/core packages/core
COPY packages/client packages/client
COPY services/api services/api
COPY services/dashboard services/dashboard
RUN node scripts/build.mjs api dashboard

FROM manifests AS runtime-deps
RUN --mount=type=secret,id=ca --mount=type=cache,target=/root/.npm \
    if [ -s /run/secrets/ca ]; then export NODE_EXTRA_CA_CERTS=/run/secrets/ca; fi \
 && npm ci --no-audit --no-fund --omit=dev --workspace services/api

FROM node:22-bookworm-slim
ENV NODE_ENV=production
WORKDIR /app
COPY --from=runtime-deps /app/node_modules ./node_modules
# package.json says "type": "module" for the bundle next to it.
COPY services/api/package.json services/api/
COPY --from=build /app/services/api/dist services/api/dist
COPY --from=build /app/services/dashboard/dist services/dashboard/dist
USER node
EXPOSE 3000
CMD ["node", "--enable-source-maps", "services/api/dist/main.js"]
