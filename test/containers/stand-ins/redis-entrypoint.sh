#!/bin/sh
# What the official redis image's entrypoint does that compose relies on: options alone run
# redis-server; as root it takes /data over for the redis user and drops to it; without a config
# file or password it turns protected mode off (reachable from the other containers).
set -e
if [ "${1#-}" != "$1" ]; then set -- redis-server "$@"; fi
if [ "$1" = redis-server ] && [ "$(id -u)" = 0 ]; then
  find . \! -user redis -exec chown redis '{}' +
  exec setpriv --reuid=redis --regid=redis --init-groups "$0" "$@"
fi
if [ "$1" = redis-server ]; then
  case " $* " in *" --protected-mode "*|*.conf*|*" --requirepass "*) ;; *) set -- "$@" --protected-mode no ;; esac
fi
exec "$@"
