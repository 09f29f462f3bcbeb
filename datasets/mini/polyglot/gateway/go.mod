module github.com/navbench/relay/gateway

go 1.21
