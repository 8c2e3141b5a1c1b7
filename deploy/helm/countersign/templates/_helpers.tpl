{{- define "countersign.fullname" -}}
{{- printf "%s-%s" .Release.Name .Chart.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "countersign.labels" -}}
app.kubernetes.io/name: {{ .Chart.Name }}
app.kubernetes.io/instance: {{ .Release.Name }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
{{- end -}}

{{- define "countersign.secretName" -}}
{{- default (printf "%s-secrets" (include "countersign.fullname" .)) .Values.existingSecret -}}
{{- end -}}

{{- define "countersign.image" -}}
{{ .Values.image.repository }}:{{ .Values.image.tag }}
{{- end -}}

{{/* Settings every process shares. */}}
{{- define "countersign.env" -}}
- name: DATABASE_URL
  valueFrom: { secretKeyRef: { name: {{ include "countersign.secretName" . }}, key: DATABASE_URL } }
- name: COUNTERSIGN_ENCRYPTION_KEY
  valueFrom: { secretKeyRef: { name: {{ include "countersign.secretName" . }}, key: COUNTERSIGN_ENCRYPTION_KEY } }
- name: COUNTERSIGN_ENCRYPTION_OLD_KEYS
  valueFrom: { secretKeyRef: { name: {{ include "countersign.secretName" . }}, key: COUNTERSIGN_ENCRYPTION_OLD_KEYS, optional: true } }
- name: TEMPORAL_ADDRESS
  value: {{ required "temporal.address is required" .Values.temporal.address | quote }}
- name: TEMPORAL_NAMESPACE
  value: {{ .Values.temporal.namespace | quote }}
- name: TEMPORAL_TASK_QUEUE
  value: {{ .Values.temporal.taskQueue | quote }}
- name: TEMPORAL_DEPLOYMENT_NAME
  value: {{ .Values.temporal.deploymentName | quote }}
- name: WORKER_VERSIONING
  value: {{ .Values.temporal.workerVersioning | quote }}
- name: BASE_URL
  value: {{ required "baseUrl is required" .Values.baseUrl | quote }}
- name: LOG_LEVEL
  value: {{ .Values.logLevel | quote }}
{{- with .Values.extraEnv }}
{{ toYaml . }}
{{- end }}
{{- end -}}
