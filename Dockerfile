# kiln serve in a container: README's steps in Debian 12, then only the installed kiln and the
# shared libraries it links in the image that runs. The compile cache of the embedded model is
# warmed while the image is built, so a container's first request does not wait for a repack.
#   podman build -t kiln .        (or docker build)
#   podman run -p 8000:8000 kiln  (kiln serve on the embedded model; see docs/DEPLOY.md)
# A model of your own: mount it and pass `serve --model=/models/NAME ...`, with CACHE_DIR on a
# volume (deploy/kubernetes/kiln.yaml), or bake it in with a `FROM kiln` image that copies it and
# runs `kiln run --model=... -n 1` once, as below. The cache holds one entry per model and CPU
# ISA: on a CPU of another kind the first load compiles (and writes it when CACHE_DIR is writable).

FROM debian:12-slim AS build
WORKDIR /src
# The package list alone first, so its layer is reused while only the sources change.
COPY tools/install_dependencies.sh tools/debian-packages.txt tools/
RUN tools/install_dependencies.sh && rm -rf /var/lib/apt/lists/*
COPY . .
# README's build, without what only the tests use (the suite, benchmarks, Python package).
RUN cmake -S . -B /build -G Ninja -DKILN_BUILD_TESTS=OFF -DKILN_BUILD_BENCH=OFF -DKILN_BUILD_PYTHON=OFF \
 && cmake --build /build \
 && cmake --install /build --prefix /opt/kiln \
 && rm -rf /opt/kiln/include /opt/kiln/lib/cmake /opt/kiln/lib/pkgconfig \
 && tools/runtime_packages.sh /opt/kiln/bin/kiln > /opt/kiln/share/kiln/runtime-packages.txt

FROM debian:12-slim
COPY --from=build /opt/kiln /opt/kiln
RUN apt-get update -q \
 && DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends \
      $(cat /opt/kiln/share/kiln/runtime-packages.txt) \
 && rm -rf /var/lib/apt/lists/*
ENV PATH=/opt/kiln/bin:$PATH
# kiln runs as a user of its own, which owns the cache (deploy/kubernetes/kiln.yaml names its id).
RUN groupadd --system --gid 10001 kiln \
 && useradd --system --uid 10001 --gid kiln --no-create-home --home-dir /var/cache/kiln kiln \
 && install -d -o kiln -g kiln /var/cache/kiln
USER kiln
RUN kiln run -n 1 --property=CACHE_DIR=/var/cache/kiln > /dev/null
EXPOSE 8000
ENTRYPOINT ["kiln"]
CMD ["serve", "--host=0.0.0.0", "--port=8000", "--property=CACHE_DIR=/var/cache/kiln"]
