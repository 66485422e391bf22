# Parley's container image: `docker build -t parley .`, then
#   docker run -p 8080:8080 -v parley-data:/data -v parley-models:/models parley
# Packs baked in at build time: --build-arg PARLEY_PACKS="<catalogue id> …". The npm cache mounts
# need BuildKit (Docker's default builder since 23.0) or buildah.
#
# test/deploy/container.test.ts builds and runs this file unchanged with buildah, on a local
# stand-in for node:22-bookworm-slim (a debootstrap root plus the official Node 22 binary),
# because the machines that run the tests can neither pull images nor run a container engine.

# Production dependencies, installed without running any package's install script: the only one
# that compiles is better-sqlite3 12, the SQLite driver of Node 20, which this Node 22 image never
# loads (it uses better-sqlite3 13, installed as better-sqlite3-napi, whose binaries ship in the
# package), so it is removed and nothing needs a compiler. koffi's and sherpa-onnx's binaries come
# in their per-platform packages.
FROM node:22-bookworm-slim AS dependencies
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
    npm ci --omit=dev --ignore-scripts --no-audit --no-fund \
 && rm -rf node_modules/better-sqlite3

# The compiled server: TypeScript needs the development dependencies, which stay in this stage.
FROM node:22-bookworm-slim AS build
WORKDIR /app
COPY package.json package-lock.json ./
RUN --mount=type=cache,target=/root/.npm,sharing=locked \
    npm ci --ignore-scripts --no-audit --no-fund
COPY tsconfig.json tsconfig.build.json ./
COPY src ./src
RUN npm run build --silent

FROM node:22-bookworm-slim
# espeak-ng-data: phonemes of Piper voices that ship none; ffmpeg: uploads in formats the built-in
# decoders do not read (m4a/AAC, AIFF, …); bzip2: the .tar.bz2 packs of `parley models pull`.
RUN apt-get update \
 && apt-get install -y --no-install-recommends espeak-ng-data ffmpeg bzip2 \
 && rm -rf /var/lib/apt/lists/*

WORKDIR /app
COPY --from=dependencies /app/node_modules ./node_modules
# What the server reads at run time besides node_modules: package.json (its version), the
# catalogue of packs (read from src/models/ by the compiled code), the playground (web/).
COPY package.json ./
COPY src/models/catalogue.json ./src/models/catalogue.json
COPY web ./web
COPY bin ./bin
COPY --from=build /app/dist/src ./dist/src
RUN ln -s /app/bin/parley.js /usr/local/bin/parley \
 && mkdir /data /models \
 && chown node:node /data /models

# As `npm start` sets: glibc's many per-thread malloc arenas otherwise keep growing the memory of
# the inference processes.
ENV NODE_ENV=production \
    MALLOC_ARENA_MAX=2 \
    PARLEY_DATA_DIR=/data \
    PARLEY_MODELS_DIR=/models
USER node

# Packs pulled here land in the image's /models, which Docker copies into an empty named volume
# the first time it is mounted there. The pull runs before VOLUME: a build step's changes to a
# declared volume are discarded.
ARG PARLEY_PACKS=""
RUN if [ -n "$PARLEY_PACKS" ]; then parley models pull $PARLEY_PACKS; fi
VOLUME ["/data", "/models"]

EXPOSE 8080
# The port is PORT (else PARLEY_PORT, else 8080); with PARLEY_TLS__CERT_FILE set it speaks HTTPS
# with a certificate made for other names than 127.0.0.1, so the check does not verify it.
HEALTHCHECK --interval=15s --timeout=5s --start-period=120s --retries=3 \
  CMD ["node", "-e", "const tls = !!process.env.PARLEY_TLS__CERT_FILE; require(tls ? 'node:https' : 'node:http').get({ host: '127.0.0.1', port: process.env.PORT || process.env.PARLEY_PORT || 8080, path: '/readyz', rejectUnauthorized: false }, (r) => process.exit(r.statusCode === 200 ? 0 : 1)).on('error', () => process.exit(1))"]
ENTRYPOINT ["parley"]
CMD ["serve"]
