// open_path() on Windows (schema/terse/portable_libc.hpp): CreateFile with every sharing mode,
// handed to the C library as a descriptor.
#include <fcntl.h>
#include <io.h>
#include <sys/stat.h>
#include <windows.h>

#include <cerrno>
#include <cstdint>

#include "terse/portable_libc.hpp"

namespace terse {
namespace {

DWORD creation_of(int flags) noexcept {
  if ((flags & O_CREAT) != 0 && (flags & O_EXCL) != 0) return CREATE_NEW;
  if ((flags & O_CREAT) != 0) return (flags & O_TRUNC) != 0 ? CREATE_ALWAYS : OPEN_ALWAYS;
  return (flags & O_TRUNC) != 0 ? TRUNCATE_EXISTING : OPEN_EXISTING;
}

int errno_of(DWORD error) noexcept {
  switch (error) {
    case ERROR_FILE_NOT_FOUND:
    case ERROR_PATH_NOT_FOUND:
    case ERROR_INVALID_NAME:
    case ERROR_BAD_NETPATH:
      return ENOENT;
    case ERROR_FILE_EXISTS:
    case ERROR_ALREADY_EXISTS:
      return EEXIST;
    case ERROR_ACCESS_DENIED:
    case ERROR_SHARING_VIOLATION:
    case ERROR_LOCK_VIOLATION:
    case ERROR_WRITE_PROTECT:
      return EACCES;
    case ERROR_TOO_MANY_OPEN_FILES:
      return EMFILE;
    case ERROR_DISK_FULL:
    case ERROR_HANDLE_DISK_FULL:
      return ENOSPC;
    case ERROR_FILENAME_EXCED_RANGE:
      return ENAMETOOLONG;
    default:
      return EIO;
  }
}

}  // namespace

int open_path(const char* path, int flags, int mode) noexcept {
  DWORD access = 0;
  switch (flags & (O_RDONLY | O_WRONLY | O_RDWR)) {
    case O_WRONLY:
      access = GENERIC_WRITE;
      break;
    case O_RDWR:
      access = GENERIC_READ | GENERIC_WRITE;
      break;
    default:
      access = GENERIC_READ;
      break;
  }
  // Created without write permission, as open() does it on Windows: read-only.
  DWORD attributes =
      (flags & O_CREAT) != 0 && (mode & _S_IWRITE) == 0 ? FILE_ATTRIBUTE_READONLY : FILE_ATTRIBUTE_NORMAL;
  HANDLE handle = CreateFileA(path, access, FILE_SHARE_READ | FILE_SHARE_WRITE | FILE_SHARE_DELETE, nullptr,
                              creation_of(flags), attributes, nullptr);
  if (handle == INVALID_HANDLE_VALUE) {
    errno = errno_of(GetLastError());
    return -1;
  }
  // The descriptor's own flags: appending, and (kOpenFlags) not inherited; binary, since
  // O_TEXT is not among them.
  int fd = _open_osfhandle(reinterpret_cast<std::intptr_t>(handle),
                           (flags & (O_APPEND | O_RDONLY | O_WRONLY | O_RDWR)) | kOpenFlags);
  if (fd < 0) {
    int error = errno;
    CloseHandle(handle);
    errno = error;
  }
  return fd;
}

}  // namespace terse
