# The Debian package, made by CPack's DEB generator from the install() rules
# (scripts/package.sh; docs/deploying.md says why CPack): what
# `cmake --install` puts under the prefix, plus the service, its settings and
# the maintainer scripts. Configure it with CMAKE_INSTALL_PREFIX=/usr: the
# tool finds its HTTP module relative to its own directory, fixed at configure
# time.

# The unit and its settings name /usr/bin/hacoboot-sampler, and systemd reads
# units from /lib, not from a prefix: they go only into a /usr install.
if(CMAKE_INSTALL_PREFIX STREQUAL "/usr")
  install(FILES contrib/systemd/hacoboot-sampler.service DESTINATION /lib/systemd/system)
  install(FILES contrib/systemd/hacoboot-sampler.default DESTINATION ${CMAKE_INSTALL_FULL_SYSCONFDIR}/default
          RENAME hacoboot-sampler)
endif()
install(FILES contrib/deb/copyright DESTINATION ${CMAKE_INSTALL_DOCDIR})

set(CPACK_GENERATOR DEB)
set(CPACK_PACKAGING_INSTALL_PREFIX ${CMAKE_INSTALL_PREFIX})
set(CPACK_STRIP_FILES ON)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_MAINTAINER "The hacoboot-sampler authors <hacoboot-sampler@invalid>")
set(CPACK_DEBIAN_PACKAGE_SECTION admin)
# The synopsis is the project's description; this, the extended one.
set(CPACK_PACKAGE_DESCRIPTION "hacoboot-sampler follows every Haconiwa container launch with eBPF (libbpf
CO-RE), from the supervisor's start through each bootstrap phase to the
container's execve and first listen, and reports where the time goes: a
summary per milestone and phase, per-boot rows, timelines, a regression gate
for CI, and a Prometheus exporter (the hacoboot-sampler service).")
# The libraries' packages, from dpkg-shlibdeps; procps for the unit's /bin/kill.
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
# libsystemd0: sd_notify for the service, loaded at run time (cli/service_ready.cpp), which
# dpkg-shlibdeps cannot see.
set(CPACK_DEBIAN_PACKAGE_DEPENDS "procps, libsystemd0")
# Fills the BTF cache: without it every start reads the whole kernel BTF.
set(CPACK_DEBIAN_PACKAGE_RECOMMENDS bpftool)
set(CPACK_DEBIAN_PACKAGE_CONTROL_EXTRA
    ${CMAKE_CURRENT_SOURCE_DIR}/contrib/deb/conffiles ${CMAKE_CURRENT_SOURCE_DIR}/contrib/deb/postinst
    ${CMAKE_CURRENT_SOURCE_DIR}/contrib/deb/prerm ${CMAKE_CURRENT_SOURCE_DIR}/contrib/deb/postrm)
set(CPACK_DEBIAN_PACKAGE_CONTROL_STRICT_PERMISSION ON)
include(CPack)
