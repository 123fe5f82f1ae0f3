/* Triton's backend API headers (tritonbackend.h, tritonserver.h) for a C11 file: they name
 * their opaque structs without `struct`, as C++ allows, so each gets a typedef first. */
#ifndef SWIN_TRITON_API_H
#define SWIN_TRITON_API_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

typedef struct TRITONSERVER_BufferAttributes TRITONSERVER_BufferAttributes;
typedef struct TRITONSERVER_Error TRITONSERVER_Error;
typedef struct TRITONSERVER_InferenceRequest TRITONSERVER_InferenceRequest;
typedef struct TRITONSERVER_InferenceResponse TRITONSERVER_InferenceResponse;
typedef struct TRITONSERVER_InferenceTrace TRITONSERVER_InferenceTrace;
typedef struct TRITONSERVER_Message TRITONSERVER_Message;
typedef struct TRITONSERVER_Metrics TRITONSERVER_Metrics;
typedef struct TRITONSERVER_Parameter TRITONSERVER_Parameter;
typedef struct TRITONSERVER_ResponseAllocator TRITONSERVER_ResponseAllocator;
typedef struct TRITONSERVER_Server TRITONSERVER_Server;
typedef struct TRITONSERVER_ServerOptions TRITONSERVER_ServerOptions;
typedef struct TRITONSERVER_Metric TRITONSERVER_Metric;
typedef struct TRITONSERVER_MetricFamily TRITONSERVER_MetricFamily;
typedef struct TRITONSERVER_MetricArgs TRITONSERVER_MetricArgs;
typedef struct TRITONBACKEND_MemoryManager TRITONBACKEND_MemoryManager;
typedef struct TRITONBACKEND_Input TRITONBACKEND_Input;
typedef struct TRITONBACKEND_Output TRITONBACKEND_Output;
typedef struct TRITONBACKEND_State TRITONBACKEND_State;
typedef struct TRITONBACKEND_Request TRITONBACKEND_Request;
typedef struct TRITONBACKEND_ResponseFactory TRITONBACKEND_ResponseFactory;
typedef struct TRITONBACKEND_Response TRITONBACKEND_Response;
typedef struct TRITONBACKEND_Backend TRITONBACKEND_Backend;
typedef struct TRITONBACKEND_Model TRITONBACKEND_Model;
typedef struct TRITONBACKEND_ModelInstance TRITONBACKEND_ModelInstance;
typedef struct TRITONBACKEND_ModelInstanceResponseStatistics TRITONBACKEND_ModelInstanceResponseStatistics;
typedef struct TRITONBACKEND_BackendAttribute TRITONBACKEND_BackendAttribute;
typedef struct TRITONBACKEND_Batcher TRITONBACKEND_Batcher;

#include "triton/core/tritonbackend.h"

#endif
