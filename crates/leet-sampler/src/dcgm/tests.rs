use super::*;

#[allow(
    clippy::large_types_passed_by_value,
    reason = "a test's values, built to be moved into the struct"
)]
fn field(field_type: u16, status: c_int, value: FieldValueUnion) -> FieldValueV1 {
    FieldValueV1 {
        version: 0,
        field_id: 1002,
        field_type,
        status,
        ts: 0,
        value,
    }
}

#[test]
fn blank_failed_and_other_typed_values_are_dropped() {
    let d = |x: f64| FieldValueUnion { dbl: x };
    let i = |x: i64| FieldValueUnion { i64: x };
    assert_eq!(value_of(&field(DCGM_FT_DOUBLE, 0, d(0.5))), Some(0.5));
    assert_eq!(value_of(&field(DCGM_FT_INT64, 0, i(123))), Some(123.0));
    assert_eq!(
        value_of(&field(DCGM_FT_DOUBLE, 0, d(DCGM_FP64_BLANK))),
        None
    );
    assert_eq!(
        value_of(&field(DCGM_FT_DOUBLE, 0, d(DCGM_FP64_BLANK + 2.0))),
        None
    );
    assert_eq!(value_of(&field(DCGM_FT_DOUBLE, 0, d(f64::NAN))), None);
    assert_eq!(
        value_of(&field(DCGM_FT_INT64, 0, i(DCGM_INT64_BLANK + 1))),
        None
    );
    assert_eq!(
        value_of(&field(DCGM_FT_DOUBLE, DCGM_ST_NO_DATA, d(0.5))),
        None
    );
    assert_eq!(value_of(&field(u16::from(b's'), 0, i(1))), None);
}

#[test]
fn ratios_become_percent_and_rates_stay_bytes() {
    let mut out = Vec::new();
    dcgm_metrics(
        &[(1, 1002, 0.25), (1, 1009, 4096.0), (0, 1001, 0.5)],
        &mut out,
    );
    assert_eq!(
        out,
        vec![
            ("gpu.1.smActive".to_string(), 25.0),
            ("gpu.1.pcieTxBytes".to_string(), 4096.0),
        ]
    );
}

#[test]
fn off_without_the_flag_and_missing_library_says_so() {
    let opts = SamplerOptions::default();
    assert_eq!(detect(&opts).err().as_deref(), Some("not enabled (--dcgm)"));
    let why = DcgmCollector::connect(
        "/nonexistent/libdcgm.so.4",
        HOSTENGINE,
        Duration::from_secs(1),
        GpuClaims::default(),
    )
    .err()
    .unwrap_or_default();
    assert!(
        why.starts_with("cannot load /nonexistent/libdcgm.so.4"),
        "{why}"
    );
    assert!(!why.contains('\n'));
}
