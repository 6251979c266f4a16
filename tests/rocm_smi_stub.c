/*
 * A stand-in librocm_smi64.so for tests/rocm_smi_stub.rs: the ROCm SMI entry points
 * leet's AMD collector calls, with fixed values for two GPUs. Signatures and enum values
 * follow ROCm/rocm_smi_lib include/rocm_smi/rocm_smi.h (commit
 * a1295714f2f6eefa5c55bf5779d17d163ed0e3d0), transcribed so no ROCm header is needed.
 *
 *   GPU 0 "AMD Instinct MI300X": every metric; current socket power.
 *   GPU 1 "AMD Instinct MI100": no energy counter and no memory overdrive
 *          (RSMI_STATUS_NOT_SUPPORTED), memory temperature fails with RSMI_STATUS_BUSY
 *          on every other call (a transient error: asked again each sample).
 *
 * Environment:
 *   ROCM_SMI_STUB_FAIL_INIT=1  rsmi_init fails with RSMI_STATUS_INIT_ERROR.
 *   ROCM_SMI_STUB_LOG=<path>   one line "<symbol> <device index or -1>" appended per call.
 *
 * Build: cc -std=c11 -shared -fPIC -o librocm_smi64.so rocm_smi_stub.c
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef enum {
    RSMI_STATUS_SUCCESS = 0x0,
    RSMI_STATUS_INVALID_ARGS,
    RSMI_STATUS_NOT_SUPPORTED,
    RSMI_STATUS_FILE_ERROR,
    RSMI_STATUS_PERMISSION,
    RSMI_STATUS_OUT_OF_RESOURCES,
    RSMI_STATUS_INTERNAL_EXCEPTION,
    RSMI_STATUS_INPUT_OUT_OF_BOUNDS,
    RSMI_STATUS_INIT_ERROR,
    RSMI_STATUS_NOT_YET_IMPLEMENTED,
    RSMI_STATUS_NOT_FOUND,
    RSMI_STATUS_INSUFFICIENT_SIZE,
    RSMI_STATUS_INTERRUPT,
    RSMI_STATUS_UNEXPECTED_SIZE,
    RSMI_STATUS_NO_DATA,
    RSMI_STATUS_UNEXPECTED_DATA,
    RSMI_STATUS_BUSY,
} rsmi_status_t;

typedef enum { RSMI_MEM_TYPE_VRAM = 0, RSMI_MEM_TYPE_VIS_VRAM, RSMI_MEM_TYPE_GTT } rsmi_memory_type_t;
typedef enum { RSMI_TEMP_TYPE_EDGE = 0, RSMI_TEMP_TYPE_JUNCTION, RSMI_TEMP_TYPE_MEMORY } rsmi_temperature_type_t;
typedef enum { RSMI_TEMP_CURRENT = 0 } rsmi_temperature_metric_t;
typedef enum { RSMI_AVERAGE_POWER = 0, RSMI_CURRENT_POWER, RSMI_INVALID_POWER = 0xFFFFFFFF } RSMI_POWER_TYPE;
typedef enum { RSMI_SW_COMP_DRIVER = 0 } rsmi_sw_component_t;

static void log_call(const char *sym, long long dev) {
    const char *path = getenv("ROCM_SMI_STUB_LOG");
    if (!path) return;
    FILE *f = fopen(path, "a");
    if (!f) return;
    fprintf(f, "%s %lld\n", sym, dev);
    fclose(f);
}

static int initialized;
#define NUM_DEVICES 2u

#define DEVICE_CALL(sym, out)                                     \
    log_call(sym, (long long)dv_ind);                             \
    if (!initialized) return RSMI_STATUS_INIT_ERROR;              \
    if (dv_ind >= NUM_DEVICES) return RSMI_STATUS_INVALID_ARGS;   \
    if (!(out)) return RSMI_STATUS_INVALID_ARGS

rsmi_status_t rsmi_init(uint64_t init_flags) {
    log_call("rsmi_init", (long long)init_flags);
    if (getenv("ROCM_SMI_STUB_FAIL_INIT")) return RSMI_STATUS_INIT_ERROR;
    initialized = 1;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_shut_down(void) {
    log_call("rsmi_shut_down", -1);
    initialized = 0;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_status_string(rsmi_status_t status, const char **status_string) {
    if (!status_string) return RSMI_STATUS_INVALID_ARGS;
    switch (status) {
    case RSMI_STATUS_INIT_ERROR:
        *status_string = "RSMI_STATUS_INIT_ERROR: An error occurred during initialization";
        break;
    case RSMI_STATUS_NOT_SUPPORTED:
        *status_string = "RSMI_STATUS_NOT_SUPPORTED: Feature not supported";
        break;
    default:
        *status_string = "RSMI_STATUS_UNKNOWN_ERROR";
    }
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_num_monitor_devices(uint32_t *num_devices) {
    log_call("rsmi_num_monitor_devices", -1);
    if (!initialized) return RSMI_STATUS_INIT_ERROR;
    if (!num_devices) return RSMI_STATUS_INVALID_ARGS;
    *num_devices = NUM_DEVICES;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_name_get(uint32_t dv_ind, char *name, size_t len) {
    DEVICE_CALL("rsmi_dev_name_get", name);
    const char *n = dv_ind == 0 ? "AMD Instinct MI300X" : "AMD Instinct MI100";
    if (len <= strlen(n)) return RSMI_STATUS_INSUFFICIENT_SIZE;
    strcpy(name, n);
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_version_str_get(rsmi_sw_component_t component, char *ver_str, uint32_t len) {
    log_call("rsmi_version_str_get", -1);
    if (component != RSMI_SW_COMP_DRIVER || !ver_str || len < 8) return RSMI_STATUS_INVALID_ARGS;
    strcpy(ver_str, "6.7.0");
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_busy_percent_get(uint32_t dv_ind, uint32_t *busy_percent) {
    DEVICE_CALL("rsmi_dev_busy_percent_get", busy_percent);
    *busy_percent = dv_ind == 0 ? 87u : 3u;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_memory_busy_percent_get(uint32_t dv_ind, uint32_t *busy_percent) {
    DEVICE_CALL("rsmi_dev_memory_busy_percent_get", busy_percent);
    *busy_percent = dv_ind == 0 ? 41u : 0u;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_mem_overdrive_level_get(uint32_t dv_ind, uint32_t *od) {
    DEVICE_CALL("rsmi_dev_mem_overdrive_level_get", od);
    if (dv_ind == 1) return RSMI_STATUS_NOT_SUPPORTED;
    *od = 5u;
    return RSMI_STATUS_SUCCESS;
}

/* VRAM: GPU 0 48 of 192 GiB, GPU 1 8 of 32 GiB */
rsmi_status_t rsmi_dev_memory_total_get(uint32_t dv_ind, rsmi_memory_type_t mem_type, uint64_t *total) {
    DEVICE_CALL("rsmi_dev_memory_total_get", total);
    if (mem_type != RSMI_MEM_TYPE_VRAM) return RSMI_STATUS_INVALID_ARGS;
    *total = (dv_ind == 0 ? 192ull : 32ull) << 30;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_memory_usage_get(uint32_t dv_ind, rsmi_memory_type_t mem_type, uint64_t *used) {
    DEVICE_CALL("rsmi_dev_memory_usage_get", used);
    if (mem_type != RSMI_MEM_TYPE_VRAM) return RSMI_STATUS_INVALID_ARGS;
    *used = (dv_ind == 0 ? 48ull : 8ull) << 30;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_temp_metric_get(uint32_t dv_ind, uint32_t sensor_type,
                                       rsmi_temperature_metric_t metric, int64_t *temperature) {
    DEVICE_CALL("rsmi_dev_temp_metric_get", temperature);
    if (sensor_type != RSMI_TEMP_TYPE_MEMORY || metric != RSMI_TEMP_CURRENT)
        return RSMI_STATUS_INVALID_ARGS;
    static int calls1;
    if (dv_ind == 1 && (calls1++ % 2) == 1) return RSMI_STATUS_BUSY;
    *temperature = dv_ind == 0 ? 51250 : 38000; /* millidegrees */
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_power_get(uint32_t dv_ind, uint64_t *power, RSMI_POWER_TYPE *type) {
    DEVICE_CALL("rsmi_dev_power_get", power);
    if (!type) return RSMI_STATUS_INVALID_ARGS;
    *power = dv_ind == 0 ? 512345678ull : 45678000ull; /* microwatts */
    *type = dv_ind == 0 ? RSMI_CURRENT_POWER : RSMI_AVERAGE_POWER;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_power_ave_get(uint32_t dv_ind, uint32_t sensor_ind, uint64_t *power) {
    DEVICE_CALL("rsmi_dev_power_ave_get", power);
    (void)sensor_ind;
    return RSMI_STATUS_NOT_SUPPORTED; /* the newer rsmi_dev_power_get must be preferred */
}

rsmi_status_t rsmi_dev_power_cap_get(uint32_t dv_ind, uint32_t sensor_ind, uint64_t *cap) {
    DEVICE_CALL("rsmi_dev_power_cap_get", cap);
    if (sensor_ind != 0) return RSMI_STATUS_INVALID_ARGS;
    *cap = dv_ind == 0 ? 750000000ull : 290000000ull;
    return RSMI_STATUS_SUCCESS;
}

rsmi_status_t rsmi_dev_energy_count_get(uint32_t dv_ind, uint64_t *power, float *counter_resolution,
                                        uint64_t *timestamp) {
    DEVICE_CALL("rsmi_dev_energy_count_get", power);
    if (!counter_resolution || !timestamp) return RSMI_STATUS_INVALID_ARGS;
    if (dv_ind == 1) return RSMI_STATUS_NOT_SUPPORTED;
    *power = 123456789ull;         /* counter ticks */
    *counter_resolution = 15.25f;  /* µJ per tick */
    *timestamp = 1700000000000000000ull;
    return RSMI_STATUS_SUCCESS;
}
