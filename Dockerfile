# syntax=docker/dockerfile:1
# Hearth's image: the release that tools/release/release.test.ts unpacks and runs (`npm run release`),
# unpacked into a slim Node.js image and started with its own bin/hearth. docs/self-hosting/docker.md.
#   docker build -t hearth .
#   docker run -p 8103:8103 -e DATABASE_URL=postgres://... hearth

# Stage one builds the release; its native modules (isolated-vm, PostgreSQL, argon2, esbuild) are
# built for this Debian, CPU and Node.js major, the same as the final stage's.
FROM node:20-bookworm AS release
WORKDIR /src
COPY . .
RUN npm ci && npm run release \
  && mkdir /release && tar -xzf release/hearth-*.tgz -C /release && mv /release/hearth-* /release/hearth

# The image: Node.js and the unpacked release, run by a user of its own.
FROM node:20-bookworm-slim
RUN groupadd --system hearth \
  && useradd --system --gid hearth --home-dir /var/lib/hearth --shell /usr/sbin/nologin hearth \
  && mkdir -p /var/lib/hearth && chown hearth:hearth /var/lib/hearth
COPY --from=release /release/hearth /opt/hearth
# HEARTH_DATA_DIR holds the embedded PostgreSQL when DATABASE_URL is not set: keep it on a volume.
ENV PORT=8103 \
    HEARTH_HOST=0.0.0.0 \
    HEARTH_DATA_DIR=/var/lib/hearth
USER hearth
WORKDIR /var/lib/hearth
VOLUME ["/var/lib/hearth"]
EXPOSE 8103
# No curl in the slim image: Node.js asks. The first start migrates and loads terminology (about a minute).
HEALTHCHECK --interval=30s --timeout=5s --start-period=180s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:' + (process.env.PORT || 8103) + '/healthcheck').then((r) => process.exit(r.ok ? 0 : 1), () => process.exit(1))"]
# SIGTERM drains in-flight requests, then the server exits 0 (give it time: stop_grace_period).
STOPSIGNAL SIGTERM
CMD ["/opt/hearth/bin/hearth"]
