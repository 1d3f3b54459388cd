//! Reads and writes at a byte offset of a file, on every OS: the journal's ring is written by
//! the writer thread and read back by the tables thread through one handle at once, so neither
//! may move a shared cursor that the other relies on.
//!
//! Why two versions: Unix has `pread`/`pwrite` (`std::os::unix::fs::FileExt`), which leave the
//! file's cursor alone. Windows has `seek_read`/`seek_write` (`std::os::windows::fs::FileExt`),
//! positioned through the call's own offset (atomic for the call) but which also move the cursor
//! and may read or write less than asked. The journal never uses the cursor (every access names
//! its offset), so moving it is harmless; the short counts are looped over here as
//! `read_exact_at`/`write_all_at` do on Unix.

use std::fs::File;
use std::io;

/// Reads exactly `buf.len()` bytes at `offset` (an `UnexpectedEof` error past the file's end).
pub(super) fn read_exact_at(file: &File, buf: &mut [u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::read_exact_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let (mut buf, mut offset) = (buf, offset);
        while !buf.is_empty() {
            match std::os::windows::fs::FileExt::seek_read(file, buf, offset) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::UnexpectedEof,
                        "the journal ends before the record does",
                    ))
                }
                Ok(read) => {
                    buf = &mut buf[read..];
                    offset += read as u64;
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }
}

/// Writes all of `buf` at `offset`.
pub(super) fn write_all_at(file: &File, buf: &[u8], offset: u64) -> io::Result<()> {
    #[cfg(unix)]
    {
        std::os::unix::fs::FileExt::write_all_at(file, buf, offset)
    }
    #[cfg(windows)]
    {
        let (mut buf, mut offset) = (buf, offset);
        while !buf.is_empty() {
            match std::os::windows::fs::FileExt::seek_write(file, buf, offset) {
                Ok(0) => {
                    return Err(io::Error::new(
                        io::ErrorKind::WriteZero,
                        "the journal took none of a write",
                    ))
                }
                Ok(written) => {
                    buf = &buf[written..];
                    offset += written as u64;
                }
                Err(error) if error.kind() == io::ErrorKind::Interrupted => {}
                Err(error) => return Err(error),
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #![allow(clippy::unwrap_used)]
    use super::*;

    #[test]
    fn reads_and_writes_land_at_their_offsets_whatever_came_before() {
        let dir = tempfile::tempdir().unwrap();
        let file = std::fs::OpenOptions::new()
            .create(true)
            .truncate(true)
            .read(true)
            .write(true)
            .open(dir.path().join("ring"))
            .unwrap();
        write_all_at(&file, &[0u8; 64], 0).unwrap();
        write_all_at(&file, b"world", 40).unwrap();
        write_all_at(&file, b"hello", 8).unwrap();
        let mut read = [0u8; 5];
        read_exact_at(&file, &mut read, 40).unwrap();
        assert_eq!(&read, b"world");
        read_exact_at(&file, &mut read, 8).unwrap();
        assert_eq!(&read, b"hello");
        let past_the_end = read_exact_at(&file, &mut read, 62).unwrap_err();
        assert_eq!(past_the_end.kind(), io::ErrorKind::UnexpectedEof);
    }
}
