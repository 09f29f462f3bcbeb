//! Commits written straight into a repository's object store, without a work tree:
//! each file's blob, an in-memory index of them, the tree and the commit. The
//! embedded `mini` repositories are built this way (so their commits are the same on
//! every machine), and so are the repositories tests make.

/// One index entry for `path` with git file `mode` (`0o100644`, `0o100755`,
/// `0o120000` for a symlink, `0o160000` for a gitlink) pointing at object `id`.
pub fn index_entry(path: &str, mode: u32, id: git2::Oid, size: usize) -> git2::IndexEntry {
    git2::IndexEntry {
        ctime: git2::IndexTime::new(0, 0),
        mtime: git2::IndexTime::new(0, 0),
        dev: 0,
        ino: 0,
        mode,
        uid: 0,
        gid: 0,
        file_size: u32::try_from(size).unwrap_or(u32::MAX),
        id,
        flags: 0,
        flags_extended: 0,
        path: path.as_bytes().to_vec(),
    }
}

/// The tree of `entries` written into `repo`; each entry is a regular file's path and
/// bytes.
pub fn write_tree(
    repo: &git2::Repository,
    files: &[(&str, &[u8])],
) -> Result<git2::Oid, git2::Error> {
    let mut index = git2::Index::new()?;
    for (path, bytes) in files {
        let id = repo.blob(bytes)?;
        index.add(&index_entry(path, 0o100644, id, bytes.len()))?;
    }
    index.write_tree_to(repo)
}

/// Commits exactly `files` (a whole new tree, not changes to the parents') on top of
/// `parents`, signed by `sig` as author and committer; `update_ref` (`Some("HEAD")`,
/// a branch) is moved to the commit when given.
pub fn commit_files(
    repo: &git2::Repository,
    parents: &[git2::Oid],
    files: &[(&str, &[u8])],
    sig: &git2::Signature<'_>,
    message: &str,
    update_ref: Option<&str>,
) -> Result<git2::Oid, git2::Error> {
    let tree = repo.find_tree(write_tree(repo, files)?)?;
    let parents = parents
        .iter()
        .map(|p| repo.find_commit(*p))
        .collect::<Result<Vec<_>, _>>()?;
    let refs: Vec<&git2::Commit<'_>> = parents.iter().collect();
    repo.commit(update_ref, sig, sig, message, &tree, &refs)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_same_files_and_signature_give_the_same_commit() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        let sig = git2::Signature::new("n", "n@example.invalid", &git2::Time::new(1, 0)).unwrap();
        let files: &[(&str, &[u8])] = &[("b/x.go", b"package b\n"), ("a.py", b"x = 1\n")];
        let ids: Vec<git2::Oid> = [a.path(), b.path()]
            .iter()
            .map(|d| {
                let repo = git2::Repository::init_bare(d).unwrap();
                commit_files(&repo, &[], files, &sig, "m\n", Some("HEAD")).unwrap()
            })
            .collect();
        assert_eq!(ids[0], ids[1]);
        let repo = git2::Repository::open_bare(a.path()).unwrap();
        let head = repo.head().unwrap().peel_to_commit().unwrap();
        assert_eq!(head.id(), ids[0]);
        let tree = head.tree().unwrap();
        assert!(tree.get_path(std::path::Path::new("b/x.go")).is_ok());
        let child = commit_files(&repo, &[ids[0]], &files[..1], &sig, "second\n", None).unwrap();
        let child = repo.find_commit(child).unwrap();
        assert_eq!(child.parent_id(0).unwrap(), ids[0]);
        assert!(
            child
                .tree()
                .unwrap()
                .get_path(std::path::Path::new("a.py"))
                .is_err()
        );
    }
}
