/*
 * A stand-in libnvidia-ml.so.1 for tests/nvml_stub.rs: the NVML C API symbols leet's
 * NvmlBackend reaches through nvml-wrapper 0.13, with fixed values for two GPUs.
 * Signatures, enum values and struct layouts follow nvml.h as transcribed in
 * nvml-wrapper-sys 0.10 (src/bindings.rs); no NVIDIA header is needed to build it.
 *
 *   GPU 0  "NVIDIA H100 80GB HBM3": every metric, ECC, one fan, GPM supported.
 *   GPU 1  "NVIDIA GeForce RTX 4090": NVML_ERROR_NOT_SUPPORTED for fan speed and ECC,
 *          no GPM; runs the compute process whose PID is in $NVML_STUB_PID.
 *
 * Environment:
 *   NVML_STUB_FAIL_INIT=1  nvmlInit_v2 fails with NVML_ERROR_DRIVER_NOT_LOADED.
 *   NVML_STUB_PID=<pid>    reported as a compute process on GPU 1.
 *   NVML_STUB_LOG=<path>   one line "<symbol> <device index or -1>" appended per call.
 *   NVML_STUB_UTIL_FILE=<path>  "<gpu 0 %> <gpu 1 %>", read at every utilisation call,
 *                          so a test can make a GPU busy or idle while it runs; a
 *                          file missing or not two numbers 0-100 leaves the fixed ones.
 *
 * Build: cc -std=c11 -shared -fPIC -o libnvidia-ml.so.1 nvml_stub.c
 */
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef unsigned int nvmlReturn_t;

#define NVML_SUCCESS 0u
#define NVML_ERROR_UNINITIALIZED 1u
#define NVML_ERROR_INVALID_ARGUMENT 2u
#define NVML_ERROR_NOT_SUPPORTED 3u
#define NVML_ERROR_INSUFFICIENT_SIZE 7u
#define NVML_ERROR_DRIVER_NOT_LOADED 9u
#define NVML_ERROR_ARGUMENT_VERSION_MISMATCH 25u

/* nvmlTemperatureSensors_t */
#define NVML_TEMPERATURE_GPU 0u
/* nvmlClockType_t */
#define NVML_CLOCK_GRAPHICS 0u
#define NVML_CLOCK_SM 1u
#define NVML_CLOCK_MEM 2u
/* nvmlMemoryErrorType_t */
#define NVML_MEMORY_ERROR_TYPE_CORRECTED 0u
#define NVML_MEMORY_ERROR_TYPE_UNCORRECTED 1u
/* nvmlEccCounterType_t */
#define NVML_VOLATILE_ECC 0u
#define NVML_AGGREGATE_ECC 1u

/* nvmlGpmMetricId_t */
#define NVML_GPM_METRIC_SM_UTIL 2u
#define NVML_GPM_METRIC_SM_OCCUPANCY 3u
#define NVML_GPM_METRIC_ANY_TENSOR_UTIL 5u
#define NVML_GPM_METRIC_HMMA_TENSOR_UTIL 7u
#define NVML_GPM_METRIC_DRAM_BW_UTIL 10u
#define NVML_GPM_METRIC_FP64_UTIL 11u
#define NVML_GPM_METRIC_FP32_UTIL 12u
#define NVML_GPM_METRIC_FP16_UTIL 13u
#define NVML_GPM_METRIC_PCIE_TX_PER_SEC 20u
#define NVML_GPM_METRIC_PCIE_RX_PER_SEC 21u
#define NVML_GPM_METRIC_NVLINK_TOTAL_RX_PER_SEC 60u
#define NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC 61u
#define NVML_GPM_METRIC_MAX 210u

#define NVML_GPM_METRICS_GET_VERSION 1u
#define NVML_GPM_SUPPORT_VERSION 1u

typedef struct nvmlDevice_st *nvmlDevice_t;
typedef struct nvmlGpmSample_st *nvmlGpmSample_t;

typedef struct {
    unsigned int gpu;
    unsigned int memory;
} nvmlUtilization_t;

typedef struct {
    unsigned int version;
    unsigned long long total;
    unsigned long long reserved;
    unsigned long long free;
    unsigned long long used;
} nvmlMemory_v2_t;

#define NVML_STRUCT_VERSION(size, ver) ((unsigned int)(size) | ((ver) << 24u))
#define nvmlMemory_v2 NVML_STRUCT_VERSION(sizeof(nvmlMemory_v2_t), 2u)

/* nvmlProcessInfo_t is nvmlProcessInfo_v2_t */
typedef struct {
    unsigned int pid;
    unsigned long long usedGpuMemory;
    unsigned int gpuInstanceId;
    unsigned int computeInstanceId;
} nvmlProcessInfo_t;

typedef struct {
    unsigned int metricId;
    nvmlReturn_t nvmlReturn;
    double value;
    struct {
        char *shortName;
        char *longName;
        char *unit;
    } metricInfo;
} nvmlGpmMetric_t;

typedef struct {
    unsigned int version;
    unsigned int numMetrics;
    nvmlGpmSample_t sample1;
    nvmlGpmSample_t sample2;
    nvmlGpmMetric_t metrics[NVML_GPM_METRIC_MAX];
} nvmlGpmMetricsGet_t;

typedef struct {
    unsigned int version;
    unsigned int isSupportedDevice;
} nvmlGpmSupport_t;

/* The LP64 layouts bindgen derived from nvml.h (nvml-wrapper-sys 0.10 bindings.rs). */
_Static_assert(sizeof(nvmlUtilization_t) == 8, "nvmlUtilization_t");
_Static_assert(sizeof(nvmlMemory_v2_t) == 40, "nvmlMemory_v2_t");
_Static_assert(sizeof(nvmlProcessInfo_t) == 24, "nvmlProcessInfo_t");
_Static_assert(sizeof(nvmlGpmMetric_t) == 40, "nvmlGpmMetric_t");
_Static_assert(offsetof(nvmlGpmMetricsGet_t, metrics) == 24, "nvmlGpmMetricsGet_t");
_Static_assert(sizeof(nvmlGpmMetricsGet_t) == 24 + 40 * NVML_GPM_METRIC_MAX, "metrics[]");
_Static_assert(sizeof(nvmlGpmSupport_t) == 8, "nvmlGpmSupport_t");

/* ---- the fake devices ---- */

struct nvmlDevice_st {
    unsigned int index;
    const char *name;
    unsigned int util_gpu, util_memory;
    unsigned long long mem_total, mem_used;
    unsigned int temp_c;
    unsigned int power_mw, power_limit_mw;
    unsigned int clock_sm, clock_mem, clock_graphics;
    int has_ecc;
    unsigned long long ecc_volatile[2], ecc_aggregate[2]; /* [corrected, uncorrected] */
    int has_fan;
    unsigned int fan_percent;
    unsigned int encoder_percent;
    unsigned long long energy_mj;
    int has_gpm;
};

#define GIB (1024ull * 1024ull * 1024ull)

static struct nvmlDevice_st devices[2] = {
    {0, "NVIDIA H100 80GB HBM3", 87, 41, 80 * GIB, 20 * GIB, 64, 312345, 700000, 1980, 2619,
     1755, 1, {7, 1}, {1000, 100}, 1, 35, 12, 987654321ull, 1},
    {1, "NVIDIA GeForce RTX 4090", 13, 7, 24 * GIB, 3 * GIB, 48, 45678, 450000, 2520, 10501,
     2235, 0, {0, 0}, {0, 0}, 0, 0, 0, 12345678ull, 0},
};
#define DEVICE_COUNT 2u

/* PIDs above Linux's pid_max (4194304) can never be the monitored process. */
#define FOREIGN_PID_0 4999998u
#define FOREIGN_PID_1 4999999u
#define FOREIGN_GRAPHICS_PID 4999997u

static int initialized;
static unsigned int sample_seq;

static void log_call(const char *symbol, int device) {
    const char *path = getenv("NVML_STUB_LOG");
    if (!path || !*path) {
        return;
    }
    FILE *f = fopen(path, "a");
    if (f) {
        fprintf(f, "%s %d\n", symbol, device);
        fclose(f);
    }
}

/* The device behind a handle, or NULL when the handle is not one of ours. */
static struct nvmlDevice_st *dev_of(nvmlDevice_t device) {
    for (unsigned int i = 0; i < DEVICE_COUNT; i++) {
        if (device == &devices[i]) {
            return &devices[i];
        }
    }
    return NULL;
}

/* Common prologue of a device query: log, check init, handle and output pointer. */
#define DEVICE_CALL(symbol, out)                                   \
    struct nvmlDevice_st *d = dev_of(device);                      \
    log_call(symbol, d ? (int)d->index : -1);                      \
    if (!initialized) {                                            \
        return NVML_ERROR_UNINITIALIZED;                           \
    }                                                              \
    if (!d || !(out)) {                                            \
        return NVML_ERROR_INVALID_ARGUMENT;                        \
    }

static nvmlReturn_t copy_string(char *buf, unsigned int length, const char *s) {
    if (!buf) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (strlen(s) + 1 > length) {
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    memcpy(buf, s, strlen(s) + 1);
    return NVML_SUCCESS;
}

/* ---- library ---- */

nvmlReturn_t nvmlInit_v2(void) {
    log_call("nvmlInit_v2", -1);
    const char *fail = getenv("NVML_STUB_FAIL_INIT");
    if (fail && strcmp(fail, "1") == 0) {
        return NVML_ERROR_DRIVER_NOT_LOADED;
    }
    initialized++;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlShutdown(void) {
    log_call("nvmlShutdown", -1);
    if (!initialized) {
        return NVML_ERROR_UNINITIALIZED;
    }
    initialized--;
    return NVML_SUCCESS;
}

const char *nvmlErrorString(nvmlReturn_t result) {
    switch (result) {
    case NVML_SUCCESS:
        return "Success";
    case NVML_ERROR_UNINITIALIZED:
        return "Uninitialized";
    case NVML_ERROR_INVALID_ARGUMENT:
        return "Invalid Argument";
    case NVML_ERROR_NOT_SUPPORTED:
        return "Not Supported";
    case NVML_ERROR_INSUFFICIENT_SIZE:
        return "Insufficient Size";
    case NVML_ERROR_DRIVER_NOT_LOADED:
        return "Driver Not Loaded";
    case NVML_ERROR_ARGUMENT_VERSION_MISMATCH:
        return "Argument Version Mismatch";
    default:
        return "Unknown Error";
    }
}

nvmlReturn_t nvmlSystemGetDriverVersion(char *version, unsigned int length) {
    log_call("nvmlSystemGetDriverVersion", -1);
    if (!initialized) {
        return NVML_ERROR_UNINITIALIZED;
    }
    return copy_string(version, length, "550.54.15");
}

nvmlReturn_t nvmlDeviceGetCount_v2(unsigned int *deviceCount) {
    log_call("nvmlDeviceGetCount_v2", -1);
    if (!initialized) {
        return NVML_ERROR_UNINITIALIZED;
    }
    if (!deviceCount) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *deviceCount = DEVICE_COUNT;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetHandleByIndex_v2(unsigned int index, nvmlDevice_t *device) {
    log_call("nvmlDeviceGetHandleByIndex_v2", (int)index);
    if (!initialized) {
        return NVML_ERROR_UNINITIALIZED;
    }
    if (index >= DEVICE_COUNT || !device) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *device = &devices[index];
    return NVML_SUCCESS;
}

/* ---- device queries ---- */

nvmlReturn_t nvmlDeviceGetName(nvmlDevice_t device, char *name, unsigned int length) {
    DEVICE_CALL("nvmlDeviceGetName", name);
    return copy_string(name, length, d->name);
}

nvmlReturn_t nvmlDeviceGetUtilizationRates(nvmlDevice_t device,
                                           nvmlUtilization_t *utilization) {
    DEVICE_CALL("nvmlDeviceGetUtilizationRates", utilization);
    utilization->gpu = d->util_gpu;
    const char *path = getenv("NVML_STUB_UTIL_FILE");
    FILE *f = (path && *path) ? fopen(path, "r") : NULL;
    if (f) {
        unsigned int u[DEVICE_COUNT];
        if (fscanf(f, "%u %u", &u[0], &u[1]) == 2 && u[0] <= 100 && u[1] <= 100) {
            utilization->gpu = u[d->index];
        }
        fclose(f);
    }
    utilization->memory = d->util_memory;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetMemoryInfo_v2(nvmlDevice_t device, nvmlMemory_v2_t *memory) {
    DEVICE_CALL("nvmlDeviceGetMemoryInfo_v2", memory);
    if (memory->version != nvmlMemory_v2) {
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    }
    memory->total = d->mem_total;
    memory->reserved = 512ull * 1024 * 1024;
    memory->used = d->mem_used;
    memory->free = d->mem_total - d->mem_used - memory->reserved;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTemperature(nvmlDevice_t device, unsigned int sensorType,
                                      unsigned int *temp) {
    DEVICE_CALL("nvmlDeviceGetTemperature", temp);
    if (sensorType != NVML_TEMPERATURE_GPU) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *temp = d->temp_c;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetPowerUsage(nvmlDevice_t device, unsigned int *power) {
    DEVICE_CALL("nvmlDeviceGetPowerUsage", power);
    *power = d->power_mw;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEnforcedPowerLimit(nvmlDevice_t device, unsigned int *limit) {
    DEVICE_CALL("nvmlDeviceGetEnforcedPowerLimit", limit);
    *limit = d->power_limit_mw;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetClockInfo(nvmlDevice_t device, unsigned int type,
                                    unsigned int *clock) {
    DEVICE_CALL("nvmlDeviceGetClockInfo", clock);
    switch (type) {
    case NVML_CLOCK_GRAPHICS:
        *clock = d->clock_graphics;
        return NVML_SUCCESS;
    case NVML_CLOCK_SM:
        *clock = d->clock_sm;
        return NVML_SUCCESS;
    case NVML_CLOCK_MEM:
        *clock = d->clock_mem;
        return NVML_SUCCESS;
    default:
        return NVML_ERROR_INVALID_ARGUMENT;
    }
}

nvmlReturn_t nvmlDeviceGetTotalEccErrors(nvmlDevice_t device, unsigned int errorType,
                                         unsigned int counterType,
                                         unsigned long long *eccCounts) {
    DEVICE_CALL("nvmlDeviceGetTotalEccErrors", eccCounts);
    if (errorType > NVML_MEMORY_ERROR_TYPE_UNCORRECTED || counterType > NVML_AGGREGATE_ECC) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (!d->has_ecc) {
        return NVML_ERROR_NOT_SUPPORTED;
    }
    *eccCounts = counterType == NVML_VOLATILE_ECC ? d->ecc_volatile[errorType]
                                                   : d->ecc_aggregate[errorType];
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetFanSpeed_v2(nvmlDevice_t device, unsigned int fan,
                                      unsigned int *speed) {
    DEVICE_CALL("nvmlDeviceGetFanSpeed_v2", speed);
    if (!d->has_fan) {
        return NVML_ERROR_NOT_SUPPORTED;
    }
    if (fan != 0) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *speed = d->fan_percent;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetEncoderUtilization(nvmlDevice_t device, unsigned int *utilization,
                                             unsigned int *samplingPeriodUs) {
    DEVICE_CALL("nvmlDeviceGetEncoderUtilization", utilization);
    if (!samplingPeriodUs) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    *utilization = d->encoder_percent;
    *samplingPeriodUs = 167000;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetTotalEnergyConsumption(nvmlDevice_t device,
                                                 unsigned long long *energy) {
    DEVICE_CALL("nvmlDeviceGetTotalEnergyConsumption", energy);
    *energy = d->energy_mj;
    return NVML_SUCCESS;
}

/* NVML's list convention: *infoCount is the buffer's capacity on input; when it is too
 * small (the count query passes 0 and may pass NULL) the call sets *infoCount to the
 * number needed and returns NVML_ERROR_INSUFFICIENT_SIZE. */
static nvmlReturn_t list_processes(const unsigned int *pids, unsigned int n,
                                   unsigned int *infoCount, nvmlProcessInfo_t *infos) {
    if (*infoCount < n || (n > 0 && !infos)) {
        *infoCount = n;
        return NVML_ERROR_INSUFFICIENT_SIZE;
    }
    for (unsigned int i = 0; i < n; i++) {
        infos[i].pid = pids[i];
        infos[i].usedGpuMemory = (unsigned long long)(i + 1) * GIB;
        infos[i].gpuInstanceId = 0xFFFFFFFFu;
        infos[i].computeInstanceId = 0xFFFFFFFFu;
    }
    *infoCount = n;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlDeviceGetComputeRunningProcesses_v3(nvmlDevice_t device,
                                                     unsigned int *infoCount,
                                                     nvmlProcessInfo_t *infos) {
    DEVICE_CALL("nvmlDeviceGetComputeRunningProcesses_v3", infoCount);
    unsigned int pids[2];
    unsigned int n = 0;
    if (d->index == 0) {
        pids[n++] = FOREIGN_PID_0;
    } else {
        pids[n++] = FOREIGN_PID_1;
        const char *pid = getenv("NVML_STUB_PID");
        if (pid && *pid) {
            pids[n++] = (unsigned int)strtoul(pid, NULL, 10);
        }
    }
    return list_processes(pids, n, infoCount, infos);
}

nvmlReturn_t nvmlDeviceGetGraphicsRunningProcesses_v3(nvmlDevice_t device,
                                                      unsigned int *infoCount,
                                                      nvmlProcessInfo_t *infos) {
    DEVICE_CALL("nvmlDeviceGetGraphicsRunningProcesses_v3", infoCount);
    unsigned int pids[1] = {FOREIGN_GRAPHICS_PID};
    return list_processes(pids, d->index == 1 ? 1 : 0, infoCount, infos);
}

/* ---- GPM ---- */

#define SAMPLE_MAGIC 0x47504d53u /* "GPMS" */

struct nvmlGpmSample_st {
    unsigned int magic;
    int device; /* -1 until nvmlGpmSampleGet fills it */
    unsigned int seq;
};

static int sample_ok(nvmlGpmSample_t s) { return s && s->magic == SAMPLE_MAGIC; }

nvmlReturn_t nvmlGpmQueryDeviceSupport(nvmlDevice_t device, nvmlGpmSupport_t *gpmSupport) {
    DEVICE_CALL("nvmlGpmQueryDeviceSupport", gpmSupport);
    if (gpmSupport->version != NVML_GPM_SUPPORT_VERSION) {
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    }
    gpmSupport->isSupportedDevice = d->has_gpm ? 1u : 0u;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleAlloc(nvmlGpmSample_t *gpmSample) {
    log_call("nvmlGpmSampleAlloc", -1);
    if (!initialized) {
        return NVML_ERROR_UNINITIALIZED;
    }
    if (!gpmSample) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    struct nvmlGpmSample_st *s = malloc(sizeof *s);
    if (!s) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    s->magic = SAMPLE_MAGIC;
    s->device = -1;
    s->seq = 0;
    *gpmSample = s;
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleFree(nvmlGpmSample_t gpmSample) {
    log_call("nvmlGpmSampleFree", sample_ok(gpmSample) ? gpmSample->device : -1);
    if (!sample_ok(gpmSample)) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    gpmSample->magic = 0; /* a double free is caught by sample_ok above */
    free(gpmSample);
    return NVML_SUCCESS;
}

nvmlReturn_t nvmlGpmSampleGet(nvmlDevice_t device, nvmlGpmSample_t gpmSample) {
    DEVICE_CALL("nvmlGpmSampleGet", sample_ok(gpmSample));
    if (!d->has_gpm) {
        return NVML_ERROR_NOT_SUPPORTED;
    }
    gpmSample->device = (int)d->index;
    gpmSample->seq = ++sample_seq;
    return NVML_SUCCESS;
}

static void set_metric(nvmlGpmMetric_t *m, double value, const char *name, const char *unit) {
    m->nvmlReturn = NVML_SUCCESS;
    m->value = value;
    m->metricInfo.shortName = (char *)name;
    m->metricInfo.longName = (char *)name;
    m->metricInfo.unit = (char *)unit;
}

nvmlReturn_t nvmlGpmMetricsGet(nvmlGpmMetricsGet_t *metricsGet) {
    log_call("nvmlGpmMetricsGet", -1);
    if (!initialized) {
        return NVML_ERROR_UNINITIALIZED;
    }
    if (!metricsGet) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    if (metricsGet->version != NVML_GPM_METRICS_GET_VERSION) {
        return NVML_ERROR_ARGUMENT_VERSION_MISMATCH;
    }
    nvmlGpmSample_t s1 = metricsGet->sample1, s2 = metricsGet->sample2;
    /* Both samples taken, on the same device, sample1 first. */
    if (metricsGet->numMetrics > NVML_GPM_METRIC_MAX || !sample_ok(s1) || !sample_ok(s2) ||
        s1->device < 0 || s1->device != s2->device || s1->seq >= s2->seq) {
        return NVML_ERROR_INVALID_ARGUMENT;
    }
    for (unsigned int i = 0; i < metricsGet->numMetrics; i++) {
        nvmlGpmMetric_t *m = &metricsGet->metrics[i];
        switch (m->metricId) {
        case NVML_GPM_METRIC_SM_UTIL:
            set_metric(m, 71.5, "sm_util", "%");
            break;
        case NVML_GPM_METRIC_SM_OCCUPANCY:
            set_metric(m, 33.25, "sm_occupancy", "%");
            break;
        case NVML_GPM_METRIC_ANY_TENSOR_UTIL:
            set_metric(m, 48.0, "any_tensor_util", "%");
            break;
        case NVML_GPM_METRIC_DRAM_BW_UTIL:
            set_metric(m, 62.5, "dram_bw_util", "%");
            break;
        case NVML_GPM_METRIC_FP64_UTIL:
            set_metric(m, 1.5, "fp64_util", "%");
            break;
        case NVML_GPM_METRIC_FP32_UTIL:
            set_metric(m, 12.75, "fp32_util", "%");
            break;
        case NVML_GPM_METRIC_FP16_UTIL:
            set_metric(m, 3.5, "fp16_util", "%");
            break;
        case NVML_GPM_METRIC_HMMA_TENSOR_UTIL:
            set_metric(m, 45.25, "hmma_tensor_util", "%");
            break;
        case NVML_GPM_METRIC_PCIE_TX_PER_SEC:
            set_metric(m, 1536.5, "pcie_tx", "MiB/sec");
            break;
        case NVML_GPM_METRIC_PCIE_RX_PER_SEC:
            set_metric(m, 812.25, "pcie_rx", "MiB/sec");
            break;
        case NVML_GPM_METRIC_NVLINK_TOTAL_TX_PER_SEC:
            set_metric(m, 20480.0, "nvlink_total_tx", "MiB/sec");
            break;
        default:
            /* NVLink RX (and anything else) fails per metric, as on a GPU whose
             * links are down: the call itself still succeeds. */
            m->nvmlReturn = NVML_ERROR_NOT_SUPPORTED;
            m->value = 0.0;
            m->metricInfo.shortName = NULL;
            m->metricInfo.longName = NULL;
            m->metricInfo.unit = NULL;
            break;
        }
    }
    return NVML_SUCCESS;
}
