{{/* Labels on every object. */}}
{{- define "dranet.labels" -}}
app.kubernetes.io/name: dranet
app.kubernetes.io/part-of: dranet
app.kubernetes.io/version: {{ .Values.image.tag | quote }}
{{- end -}}

{{- define "dranet.image" -}}
{{ printf "%s/%s:%s" .registry .repository .tag }}
{{- end -}}

{{/* dranetd's args, one per value of .Values.flags (tests/packaging checks each is passed). */}}
{{- define "dranet.args" -}}
{{- $f := .Values.flags -}}
- --plugin-dir={{ .Values.pluginVolume.mountPath }}
- --host-root={{ $f.hostRoot }}
- --driver-name={{ $f.driverName }}
{{- if $f.kubeconfig }}
- --kubeconfig={{ $f.kubeconfig }}
{{- end }}
- --publish={{ $f.publish }}
- --resource-api-version={{ $f.resourceApiVersion }}
- --move-ib-interfaces={{ $f.moveIbInterfaces }}
{{- if kindIs "string" $f.filter }}
{{- if eq $f.filter "" }}
{{- /* CLI11 reads `--filter=` as waiting for a value: pass "" as its own argument. */}}
- --filter
- ""
{{- else }}
- {{ printf "--filter=%s" $f.filter | quote }}
{{- end }}
{{- end }}
- {{ printf "--metrics-address=%s" $f.metricsAddress | quote }}
- --resync-seconds={{ $f.resyncSeconds }}
- --inventory-min-poll-interval={{ $f.inventoryMinPollInterval }}
- --inventory-poll-burst={{ $f.inventoryPollBurst }}
- --log-format={{ $f.logFormat }}
- --v={{ $f.v }}
- --kubelet-plugin={{ $f.kubeletPlugin }}
- --kubelet-root-dir={{ $f.kubeletRootDir }}
- --state-dir={{ $f.stateDir }}
- --nri-socket={{ $f.nriSocket }}
- --nri={{ $f.nri }}
- --cdi-dir={{ $f.cdiDir }}
- --cdi={{ $f.cdi }}
- --rdma-exclusive={{ $f.rdmaExclusive }}
- --copy-host-routes={{ $f.copyHostRoutes }}
- --device-health={{ $f.deviceHealth }}
- --device-taints={{ $f.deviceTaints }}
{{- if $f.sharedDevices }}
- {{ printf "--shared-devices=%s" $f.sharedDevices | quote }}
- --device-shares={{ $f.deviceShares }}
{{- end }}
- --profile-provider={{ $f.profileProvider }}
{{- if $f.webhookUrl }}
- {{ printf "--webhook-url=%s" $f.webhookUrl | quote }}
{{- end }}
{{- if $f.cloudProviderHint }}
- {{ printf "--cloud-provider-hint=%s" $f.cloudProviderHint | quote }}
{{- end }}
{{- if $f.featureGates }}
- {{ printf "--feature-gates=%s" $f.featureGates | quote }}
{{- end }}
{{- range $f.pluginDir }}
- --plugin-dir={{ . }}
{{- end }}
{{- if $f.pluginAllow }}
- --plugin-allow={{ join "," $f.pluginAllow }}
{{- end }}
{{- if $f.pluginDeny }}
- --plugin-deny={{ join "," $f.pluginDeny }}
{{- end }}
{{- range $f.pluginConfig }}
- {{ printf "--plugin-config=%s" . | quote }}
{{- end }}
- --plugin-timeout-ms={{ $f.pluginTimeoutMs }}
- --allow-non-root-plugin-dir={{ $f.allowNonRootPluginDir }}
{{- end -}}
