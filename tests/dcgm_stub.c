/*
 * A stand-in libdcgm.so.4 for tests/dcgm_stub.rs: the DCGM C API entry points leet's
 * `--dcgm` collector calls, with a fake host engine holding two GPUs.
 * Signatures, constants and struct layouts follow NVIDIA/DCGM dcgmlib/dcgm_structs.h,
 * dcgm_fields.h and dcgm_agent.h (commit 72fa3feaa67d716a75323a8f47c34ff3ee73f824),
 * transcribed here so no DCGM header is needed to build it.
 *
 *   GPU 0: every DCGM_FI_PROF_* field leet asks for; ratios as doubles, byte rates as
 *          int64 (as DCGM types them).
 *   GPU 1: DCGM_FI_PROF_SM_OCCUPANCY is blank (DCGM_FP64_BLANK), NVLINK_RX has status
 *          DCGM_ST_NO_DATA, PCIE_RX is DCGM_INT64_BLANK; the rest have values.
 *   Supported profiling fields: 1001-1012 and 1014 (so PIPE_TENSOR_HMMA is watched).
 *
 * Environment:
 *   DCGM_STUB_NO_HOSTENGINE=1  dcgmConnect fails with DCGM_ST_CONNECTION_NOT_VALID.
 *   DCGM_STUB_RESTART_AFTER=N  the host engine "restarts" after N reads: the handle in use
 *                              is dead (calls return DCGM_ST_CONNECTION_NOT_VALID) and
 *                              dcgmConnect hands out a new one.
 *   DCGM_STUB_LOG=<path>       one line "<symbol> <detail>" appended per call.
 *
 * Build: cc -std=c11 -shared -fPIC -o libdcgm.so.4 dcgm_stub.c
 */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef int dcgmReturn_t;
typedef uintptr_t dcgmHandle_t;
typedef uintptr_t dcgmGpuGrp_t;
typedef uintptr_t dcgmFieldGrp_t;
typedef unsigned int dcgm_field_entity_group_t;
typedef unsigned int dcgm_field_eid_t;

#define DCGM_ST_OK 0
#define DCGM_ST_BADPARAM (-1)
#define DCGM_ST_UNINITIALIZED (-4)
#define DCGM_ST_VER_MISMATCH (-25)
#define DCGM_ST_NO_DATA (-14)
#define DCGM_ST_CONNECTION_NOT_VALID (-21)

#define DCGM_FE_GPU 0u
#define DCGM_FT_DOUBLE 'd'
#define DCGM_FT_INT64 'i'
#define DCGM_MAX_STR_LENGTH 256
#define DCGM_MAX_BLOB_LENGTH 4096
#define DCGM_MAX_NUM_DEVICES 32
#define DCGM_GROUP_ALL_GPUS 0x7fffffff
#define DCGM_FP64_BLANK 140737488355328.0
#define DCGM_INT64_BLANK 0x7ffffffffffffff0LL
#define DCGM_PROF_MAX_NUM_GROUPS_V2 10
#define DCGM_PROF_MAX_FIELD_IDS_PER_GROUP_V2 64

#define MAKE_DCGM_VERSION(typeName, ver) \
    (unsigned int)(sizeof(typeName) | ((unsigned long)(ver) << 24U))

typedef struct {
    unsigned int version;
    unsigned short fieldId;
    unsigned short fieldType;
    int status;
    int64_t ts;
    union {
        int64_t i64;
        double dbl;
        char str[DCGM_MAX_STR_LENGTH];
        char blob[DCGM_MAX_BLOB_LENGTH];
    } value;
} dcgmFieldValue_v1;
#define dcgmFieldValue_version1 MAKE_DCGM_VERSION(dcgmFieldValue_v1, 1)

typedef struct {
    unsigned short majorId;
    unsigned short minorId;
    unsigned int numFieldIds;
    unsigned short fieldIds[DCGM_PROF_MAX_FIELD_IDS_PER_GROUP_V2];
} dcgmProfMetricGroupInfo_v2;

typedef struct {
    unsigned int version;
    unsigned int unused;
    unsigned int gpuId;
    unsigned int numMetricGroups;
    dcgmProfMetricGroupInfo_v2 metricGroups[DCGM_PROF_MAX_NUM_GROUPS_V2];
} dcgmProfGetMetricGroups_v3;
#define dcgmProfGetMetricGroups_version3 MAKE_DCGM_VERSION(dcgmProfGetMetricGroups_v3, 3)

_Static_assert(sizeof(dcgmFieldValue_v1) == 4120, "dcgmFieldValue_v1");
_Static_assert(sizeof(dcgmProfGetMetricGroups_v3) == 1376, "dcgmProfGetMetricGroups_v3");

typedef int (*dcgmFieldValueEntityEnumeration_f)(dcgm_field_entity_group_t entityGroupId,
                                                 dcgm_field_eid_t entityId,
                                                 dcgmFieldValue_v1 *values, int numValues,
                                                 void *userData);

static void logf_(const char *sym, const char *fmt, long long a) {
    const char *path = getenv("DCGM_STUB_LOG");
    if (!path) return;
    FILE *f = fopen(path, "a");
    if (!f) return;
    fprintf(f, "%s ", sym);
    fprintf(f, fmt, a);
    fputc('\n', f);
    fclose(f);
}

static int initialized;
static int connected;
static int reads;
/* The live handle: 0x5a5a + the number of host engine restarts. */
static dcgmHandle_t HANDLE_LIVE = 0x5a5a;
#define HANDLE HANDLE_LIVE
#define FIELD_GROUP ((dcgmFieldGrp_t)77)
static unsigned short watched[64];
static int n_watched;
static int watching;

dcgmReturn_t dcgmInit(void) {
    logf_("dcgmInit", "%lld", -1);
    initialized = 1;
    return DCGM_ST_OK;
}

const char *dcgmErrorString(dcgmReturn_t result) {
    switch (result) {
    case DCGM_ST_CONNECTION_NOT_VALID:
        return "The connection to the host engine is not valid any longer";
    case DCGM_ST_NO_DATA:
        return "No data is available";
    default:
        return "Unknown error";
    }
}

dcgmReturn_t dcgmConnect(const char *ipAddress, dcgmHandle_t *pDcgmHandle) {
    logf_("dcgmConnect", "%lld", (long long)(ipAddress && strcmp(ipAddress, "localhost:5555") == 0));
    if (!initialized) return DCGM_ST_UNINITIALIZED;
    if (!ipAddress || !pDcgmHandle) return DCGM_ST_BADPARAM;
    if (getenv("DCGM_STUB_NO_HOSTENGINE")) return DCGM_ST_CONNECTION_NOT_VALID;
    *pDcgmHandle = HANDLE;
    connected = 1;
    return DCGM_ST_OK;
}

dcgmReturn_t dcgmGetAllDevices(dcgmHandle_t h, unsigned int gpuIdList[DCGM_MAX_NUM_DEVICES],
                               int *count) {
    logf_("dcgmGetAllDevices", "%lld", -1);
    if (h != HANDLE || !connected || !gpuIdList || !count) return DCGM_ST_BADPARAM;
    gpuIdList[0] = 0;
    gpuIdList[1] = 1;
    *count = 2;
    return DCGM_ST_OK;
}

dcgmReturn_t dcgmProfGetSupportedMetricGroups(dcgmHandle_t h, dcgmProfGetMetricGroups_v3 *g) {
    logf_("dcgmProfGetSupportedMetricGroups", "%lld", g ? (long long)g->gpuId : -1);
    if (h != HANDLE || !g) return DCGM_ST_BADPARAM;
    if (g->version != dcgmProfGetMetricGroups_version3) return DCGM_ST_VER_MISMATCH;
    /* two groups, as DCGM splits them by hardware counter set */
    static const unsigned short a[] = {1001, 1002, 1003, 1004, 1005, 1006, 1007, 1008};
    static const unsigned short b[] = {1009, 1010, 1011, 1012, 1014};
    g->numMetricGroups = 2;
    g->metricGroups[0].majorId = 0;
    g->metricGroups[0].numFieldIds = sizeof a / sizeof a[0];
    memcpy(g->metricGroups[0].fieldIds, a, sizeof a);
    g->metricGroups[1].majorId = 1;
    g->metricGroups[1].numFieldIds = sizeof b / sizeof b[0];
    memcpy(g->metricGroups[1].fieldIds, b, sizeof b);
    return DCGM_ST_OK;
}

dcgmReturn_t dcgmFieldGroupCreate(dcgmHandle_t h, int numFieldIds, const unsigned short *fieldIds,
                                  const char *name, dcgmFieldGrp_t *id) {
    logf_("dcgmFieldGroupCreate", "%lld", (long long)numFieldIds);
    if (h != HANDLE || numFieldIds <= 0 || numFieldIds > 64 || !fieldIds || !name || !id)
        return DCGM_ST_BADPARAM;
    for (int i = 0; i < numFieldIds; i++) {
        logf_("field", "%lld", (long long)fieldIds[i]);
        watched[i] = fieldIds[i];
    }
    n_watched = numFieldIds;
    *id = FIELD_GROUP;
    return DCGM_ST_OK;
}

dcgmReturn_t dcgmWatchFields(dcgmHandle_t h, dcgmGpuGrp_t groupId, dcgmFieldGrp_t fieldGroupId,
                             long long updateFreq, double maxKeepAge, int maxKeepSamples) {
    logf_("dcgmWatchFields", "%lld", updateFreq);
    if (h != HANDLE || groupId != DCGM_GROUP_ALL_GPUS || fieldGroupId != FIELD_GROUP ||
        updateFreq <= 0 || maxKeepAge < 0 || maxKeepSamples < 0)
        return DCGM_ST_BADPARAM;
    watching = 1;
    return DCGM_ST_OK;
}

/* The value GPU `gpu` has for field `id`: a double ratio or an int64 rate. */
static void fill(unsigned int gpu, unsigned short id, dcgmFieldValue_v1 *v) {
    memset(v, 0, sizeof *v);
    v->version = dcgmFieldValue_version1;
    v->fieldId = id;
    v->status = DCGM_ST_OK;
    v->ts = 1700000000000000LL;
    int rate = id >= 1009 && id <= 1012;
    v->fieldType = rate ? DCGM_FT_INT64 : DCGM_FT_DOUBLE;
    double ratio[] = {/* 1002 */ 0.625, 0.375, 0.5, 0.75, 0.0625, 0.25, 0.125};
    long long rates[] = {/* 1009 */ 1234567, 7654321, 987654321, 123456789};
    if (rate) {
        v->value.i64 = rates[id - 1009] + (long long)gpu * 1000;
    } else if (id == 1014) {
        v->value.dbl = 0.4375 - gpu * 0.125;
    } else {
        v->value.dbl = ratio[id - 1002] / (gpu + 1);
    }
    if (gpu == 1 && id == 1003) v->value.dbl = DCGM_FP64_BLANK;
    if (gpu == 1 && id == 1012) v->status = DCGM_ST_NO_DATA;
    if (gpu == 1 && id == 1010) v->value.i64 = DCGM_INT64_BLANK;
}

dcgmReturn_t dcgmGetLatestValues_v2(dcgmHandle_t h, dcgmGpuGrp_t groupId,
                                    dcgmFieldGrp_t fieldGroupId,
                                    dcgmFieldValueEntityEnumeration_f enumCB, void *userData) {
    logf_("dcgmGetLatestValues_v2", "%lld", (long long)(h - 0x5a5a));
    const char *restart = getenv("DCGM_STUB_RESTART_AFTER");
    if (restart && h == HANDLE && reads++ == atoi(restart)) {
        HANDLE_LIVE++; /* the engine restarted: this handle is gone */
        watching = 0;
    }
    if (h != HANDLE) return DCGM_ST_CONNECTION_NOT_VALID;
    if (groupId != DCGM_GROUP_ALL_GPUS || fieldGroupId != FIELD_GROUP || !enumCB)
        return DCGM_ST_BADPARAM;
    if (!watching) return DCGM_ST_NO_DATA;
    static dcgmFieldValue_v1 values[64];
    for (unsigned int gpu = 0; gpu < 2; gpu++) {
        for (int i = 0; i < n_watched; i++) fill(gpu, watched[i], &values[i]);
        if (enumCB(DCGM_FE_GPU, gpu, values, n_watched, userData) != 0) return DCGM_ST_BADPARAM;
    }
    return DCGM_ST_OK;
}
