//! The `navbench` binary: a thin shell over the library (see `navbench::cli`).

fn main() {
    std::process::exit(navbench::cli::main());
}
