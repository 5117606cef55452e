# fleetplan server image: the gRPC service with the embedded pricebook. See docs/deployment.md.
#   docker build -t fleetplan:0.1.0 .
#   docker run -p 50051:50051 -e FLEETPLAN_STORE=postgresql://fleetplan@db/fleetplan fleetplan:0.1.0
FROM python:3.11-slim AS build
WORKDIR /src
COPY requirements.lock pyproject.toml README.md ./
# The exact pins CI tests with (the lock also pins the dev tools; they are left out of the image).
RUN grep -v -E '^(grpcio-tools|mypy|mypy-protobuf|mypy_extensions|types-|pytest|hypothesis|trustme|ruff|scipy|librt|ast_serialize|pathspec|iniconfig|pluggy|Pygments|sortedcontainers)[=]' \
        requirements.lock > requirements.runtime \
 && python -m venv /opt/fleetplan \
 && /opt/fleetplan/bin/pip install --no-cache-dir -r requirements.runtime
COPY api ./api
COPY pricebook ./pricebook
COPY solver ./solver
COPY store ./store
COPY service ./service
COPY clients ./clients
RUN /opt/fleetplan/bin/pip install --no-cache-dir --no-deps .

FROM python:3.11-slim
COPY --from=build /opt/fleetplan /opt/fleetplan
RUN useradd --system --uid 10001 --home-dir /var/lib/fleetplan --create-home fleetplan
USER 10001
ENV PATH=/opt/fleetplan/bin:$PATH \
    FLEETPLAN_ADDRESS=0.0.0.0:50051 \
    FLEETPLAN_LOG_JSON=true \
    XDG_DATA_HOME=/var/lib/fleetplan
EXPOSE 50051
# SIGTERM → NOT_SERVING, drain for FLEETPLAN_GRACE_PERIOD_S, exit 0.
STOPSIGNAL SIGTERM
ENTRYPOINT ["fleetplan", "serve"]
