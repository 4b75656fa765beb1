{{/* The name of every object: the release's. */}}
{{- define "firn.fullname" -}}
{{- .Release.Name | trunc 63 | trimSuffix "-" -}}
{{- end -}}

{{- define "firn.selectorLabels" -}}
app.kubernetes.io/name: firn
app.kubernetes.io/instance: {{ .Release.Name }}
{{- end -}}

{{- define "firn.labels" -}}
{{ include "firn.selectorLabels" . }}
app.kubernetes.io/version: {{ .Chart.AppVersion | quote }}
app.kubernetes.io/managed-by: {{ .Release.Service }}
helm.sh/chart: {{ printf "%s-%s" .Chart.Name .Chart.Version }}
{{- end -}}

{{- define "firn.image" -}}
{{- $tag := .Values.image.tag | default .Chart.AppVersion -}}
{{- if hasPrefix "sha256:" $tag -}}
{{ .Values.image.repository }}@{{ $tag }}
{{- else -}}
{{ .Values.image.repository }}:{{ $tag }}
{{- end -}}
{{- end -}}

{{/*
firn.check refuses values the chart must not render: a secret that would
be written into the ConfigMap, and more than one pod on a node setting
that is one machine's (the local store, a static node, a derived one).
*/}}
{{- define "firn.check" -}}
{{- $c := .Values.config | default dict -}}
{{- $r := $c.registry | default dict -}}
{{- $s := $c.segments | default dict -}}
{{- range $k, $dsn := dict "config.registry.dsn" ($r.dsn | default "") "config.segments.dsn" ($s.dsn | default "") -}}
{{- if or (regexMatch "://[^/@]*:[^/@]*@" $dsn) (regexMatch "^[^/@(]*:[^/@(]*@" $dsn) (regexMatch "(?i)[?&](password|passwd)=" $dsn) -}}
{{- fail (printf "%s carries a password, which the chart would write into a ConfigMap: put the whole DSN in a Secret and name it in %s (name, key)" $k (ternary "dsnSecret" "segmentsDsnSecret" (eq $k "config.registry.dsn"))) -}}
{{- end -}}
{{- end -}}
{{- range $r.endpoints | default list -}}
{{- if regexMatch "://[^/@]*@" . -}}
{{- fail (printf "config.registry.endpoints: %q carries credentials, which the chart would write into a ConfigMap: use registry.digest_file or TLS client certificates from a Secret" .) -}}
{{- end -}}
{{- end -}}
{{- range (($c.auth | default dict).tokens | default list) -}}
{{- if .secret -}}
{{- fail (printf "config.auth.tokens: token %s has its secret in values, which the chart would write into a ConfigMap: give it secret_file: tokens/%s and put the secret in the Secret tokens.secretName (%s)" .name .name $.Values.tokens.secretName) -}}
{{- end -}}
{{- if not .secret_file -}}
{{- fail (printf "config.auth.tokens: token %s has no secret_file: give it secret_file: tokens/%s, a file of the Secret tokens.secretName" .name .name) -}}
{{- end -}}
{{- end -}}
{{- $store := $r.store | default "local" -}}
{{- $node := toString ($r.node | default "") -}}
{{- if gt (int .Values.replicaCount) 1 -}}
{{- if eq $store "local" -}}
{{- fail (printf "replicaCount %d on the local store: each pod would hold its own registry and issue the same IDs; use a shared registry (config.registry.store etcd, postgres, mysql or zookeeper) or replicaCount 1 with persistence.enabled" (int .Values.replicaCount)) -}}
{{- end -}}
{{- if $node -}}
{{- fail (printf "replicaCount %d with config.registry.node %s: every pod would be that one node (a derived node would be each pod's address bits, which can repeat); leave registry.node out so that each pod leases its own" (int .Values.replicaCount) $node) -}}
{{- end -}}
{{- end -}}
{{- if and .Values.persistence.enabled (gt (int .Values.replicaCount) 1) -}}
{{- fail "persistence.enabled runs one pod with its own volume: set replicaCount 1" -}}
{{- end -}}
{{- end -}}

{{/* The pod's template, for the Deployment and the StatefulSet alike. */}}
{{- define "firn.pod" -}}
{{- include "firn.check" . -}}
metadata:
  labels:
    {{- include "firn.labels" . | nindent 4 }}
  annotations:
    checksum/config: {{ toYaml .Values.config | sha256sum }}
    {{- with .Values.podAnnotations }}
    {{- toYaml . | nindent 4 }}
    {{- end }}
spec:
  terminationGracePeriodSeconds: {{ .Values.terminationGracePeriodSeconds }}
  automountServiceAccountToken: false
  securityContext:
    runAsNonRoot: true
    runAsUser: 65532
    runAsGroup: 65532
    fsGroup: 65532
    seccompProfile:
      type: RuntimeDefault
  containers:
    - name: firn
      image: {{ include "firn.image" . }}
      imagePullPolicy: {{ .Values.image.pullPolicy }}
      args: ["serve", "--config", "/etc/firn/firn.yaml"]
      env:
        - name: POD_IP
          valueFrom:
            fieldRef:
              fieldPath: status.podIP
        - name: FIRN_HTTP_LISTEN
          value: $(POD_IP):{{ .Values.service.httpPort }}
        - name: FIRN_GRPC_LISTEN
          value: $(POD_IP):{{ .Values.service.grpcPort }}
        {{- with .Values.dsnSecret.name }}
        - name: FIRN_REGISTRY_DSN
          valueFrom:
            secretKeyRef:
              name: {{ . }}
              key: {{ $.Values.dsnSecret.key }}
        {{- end }}
        {{- with .Values.segmentsDsnSecret.name }}
        - name: FIRN_SEGMENTS_DSN
          valueFrom:
            secretKeyRef:
              name: {{ . }}
              key: {{ $.Values.segmentsDsnSecret.key }}
        {{- end }}
      ports:
        - name: http
          containerPort: {{ .Values.service.httpPort }}
        - name: grpc
          containerPort: {{ .Values.service.grpcPort }}
      livenessProbe:
        httpGet:
          path: /healthz
          port: http
        periodSeconds: 10
        failureThreshold: 3
      readinessProbe:
        httpGet:
          path: /readyz
          port: http
        periodSeconds: 2
        failureThreshold: 1
      {{- with .Values.resources }}
      resources:
        {{- toYaml . | nindent 8 }}
      {{- end }}
      securityContext:
        allowPrivilegeEscalation: false
        readOnlyRootFilesystem: true
        capabilities:
          drop: ["ALL"]
      volumeMounts:
        - name: config
          mountPath: /etc/firn
          readOnly: true
        {{- if .Values.persistence.enabled }}
        - name: state
          mountPath: /var/lib/firn
        {{- end }}
  volumes:
    - name: config
      projected:
        defaultMode: 0440
        sources:
          - configMap:
              name: {{ include "firn.fullname" . }}
              items:
                - key: firn.yaml
                  path: firn.yaml
          {{- $tokens := ((.Values.config.auth | default dict).tokens | default list) }}
          {{- if $tokens }}
          - secret:
              name: {{ .Values.tokens.secretName }}
              items:
                {{- range $tokens }}
                - key: {{ base .secret_file }}
                  path: {{ .secret_file }}
                {{- end }}
          {{- end }}
  {{- with .Values.nodeSelector }}
  nodeSelector:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.tolerations }}
  tolerations:
    {{- toYaml . | nindent 4 }}
  {{- end }}
  {{- with .Values.affinity }}
  affinity:
    {{- toYaml . | nindent 4 }}
  {{- end }}
{{- end -}}
