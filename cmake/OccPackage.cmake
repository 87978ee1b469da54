# CPack: packages of exactly what `cmake --install` installs.
#   cpack -G TGZ   occtrace-<version>-Linux.tar.gz, one top folder holding bin/, lib/occtrace/,
#                  share/: unpack anywhere (occtrace finds its library from its own path).
#                  It uses the system's libprotobuf, SQLite and C++ runtime, as the .deb says.
#   cpack -G DEB   occtrace_<version>_<arch>.deb installing under /usr, its Depends computed by
#                  dpkg-shlibdeps from the binaries. libcupti.so.13 and the CUDA driver are not
#                  Debian packages: occtrace finds them at run time (launcher_cupti.h).
set(CPACK_PACKAGE_NAME occtrace)
set(CPACK_PACKAGE_VERSION "${PROJECT_VERSION}")
set(CPACK_PACKAGE_DESCRIPTION_SUMMARY "${PROJECT_DESCRIPTION}")
set(CPACK_PACKAGE_CONTACT "occtrace maintainers <occtrace@localhost>")
set(CPACK_GENERATOR "TGZ;DEB")
set(CPACK_SOURCE_GENERATOR "")
set(CPACK_STRIP_FILES ON)
set(CPACK_ARCHIVE_COMPONENT_INSTALL OFF)
set(CPACK_DEBIAN_FILE_NAME DEB-DEFAULT)
set(CPACK_DEBIAN_PACKAGE_SECTION devel)
set(CPACK_DEBIAN_PACKAGE_SHLIBDEPS ON)
set(CPACK_PACKAGE_DIRECTORY "${PROJECT_BINARY_DIR}/packages")
include(CPack)
