//! measure-env.txt, the environment the report binary measures in: 30 distinct variables, two
//! with the `NEURON_` prefix, and neither variable the resolver reads (so every getenv scans to
//! the end).

#[test]
fn thirty_distinct_variables_and_neither_the_resolver_reads() {
    let text = include_str!("../measure-env.txt");
    let lines = text.lines().filter(|l| !l.starts_with('#'));
    let mut names: Vec<&str> = lines.map(|l| l.split_once('=').unwrap().0).collect();
    names.sort_unstable();
    names.dedup();
    assert_eq!(names.len(), 30);
    for read in ["NEURON_UCODE_FLAVOR", "NRTUCODE_MPLUS_ON_MARIANA"] {
        assert!(!names.contains(&read), "{read}");
    }
    assert_eq!(names.iter().filter(|n| n.starts_with("NEURON_")).count(), 2);
}
