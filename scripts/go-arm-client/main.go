// Command go-arm-client drives the simulator's HTTPS ARM face with the Go Azure SDK
// (azcore, armcompute, armnetwork): the client the upstream provider is written with. It
// runs one named flow and prints, as JSON, every step's outcome as the SDK reported it
// (results, *azcore.ResponseError codes and statuses) and every HTTP exchange the SDK made
// (statuses and the ARM headers its pollers and retry policy read), for
// test/sim/arm/https-face.go-sdk.test.ts to compare with what real ARM answers.
//
// The face runs on a manual clock. While the SDK waits (PollUntilDone, the retry policy's
// Retry-After), a ticker moves that clock forward through POST /_sim/clock/advance, so
// minutes-long operations end in seconds of wall time; the flows also move it explicitly
// (the NIC reservation) and inject faults (POST /_sim/faults): the face's own sim routes.
package main

import (
	"bytes"
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"sync"
	"time"

	"github.com/Azure/azure-sdk-for-go/sdk/azcore"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/arm"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/cloud"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/policy"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/runtime"
	"github.com/Azure/azure-sdk-for-go/sdk/azcore/to"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/compute/armcompute/v8"
	"github.com/Azure/azure-sdk-for-go/sdk/resourcemanager/network/armnetwork/v9"
)

type settings struct {
	endpoint, caFile, subscription, group, location, subnet, flow string
	gpuSize, size                                                 string
	tickSeconds                                                   float64
	tickEvery                                                     time.Duration
}

// staticToken is an azcore.TokenCredential with a fixed token: the face accepts any bearer token.
type staticToken struct{}

func (staticToken) GetToken(context.Context, policy.TokenRequestOptions) (azcore.AccessToken, error) {
	return azcore.AccessToken{Token: "go-sdk-test-token", ExpiresOn: time.Now().Add(time.Hour)}, nil
}

// exchange is one HTTP round trip as the SDK's transport saw it.
type exchange struct {
	Method  string            `json:"method"`
	Path    string            `json:"path"`
	Query   string            `json:"query,omitempty"`
	Status  int               `json:"status"`
	Headers map[string]string `json:"headers,omitempty"`
	AtMs    int64             `json:"atMs"`
}

// recorder is the http.Client's transport: it trusts the face's CA and records every exchange.
type recorder struct {
	base  http.RoundTripper
	start time.Time
	mu    sync.Mutex
	log   []exchange
}

var recordedHeaders = []string{
	"Azure-AsyncOperation", "Azure-AsyncNotification", "Location", "Retry-After", "Content-Type", "X-Ms-Request-Id",
	"X-Ms-Ratelimit-Remaining-Subscription-Reads", "X-Ms-Ratelimit-Remaining-Subscription-Writes",
	"X-Ms-Ratelimit-Remaining-Subscription-Deletes", "X-Ms-Ratelimit-Remaining-Subscription-Global-Reads",
	"X-Ms-Ratelimit-Remaining-Subscription-Global-Writes", "X-Ms-Ratelimit-Remaining-Subscription-Global-Deletes",
	"X-Ms-Ratelimit-Remaining-Resource", "X-Ms-Error-Code",
}

func (r *recorder) RoundTrip(req *http.Request) (*http.Response, error) {
	resp, err := r.base.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	if strings.HasPrefix(req.URL.Path, "/_sim/") {
		return resp, nil
	}
	h := map[string]string{}
	for _, k := range recordedHeaders {
		if v := resp.Header.Get(k); v != "" {
			h[strings.ToLower(k)] = v
		}
	}
	r.mu.Lock()
	r.log = append(r.log, exchange{req.Method, req.URL.Path, req.URL.RawQuery, resp.StatusCode, h, time.Since(r.start).Milliseconds()})
	r.mu.Unlock()
	return resp, nil
}

// step is one SDK call's outcome.
type step struct {
	Name   string         `json:"name"`
	OK     bool           `json:"ok"`
	Result map[string]any `json:"result,omitempty"`
	Error  *stepError     `json:"error,omitempty"`
	SimT   int64          `json:"simT"`
	WallMs int64          `json:"wallMs"`
}

type stepError struct {
	// Go is true when the SDK returned an *azcore.ResponseError (else Message is the error text).
	ResponseError bool   `json:"responseError"`
	ErrorCode     string `json:"errorCode,omitempty"`
	StatusCode    int    `json:"statusCode,omitempty"`
	// The body's error.code / error.message, read back from the RawResponse.
	BodyCode    string `json:"bodyCode,omitempty"`
	BodyMessage string `json:"bodyMessage,omitempty"`
	Message     string `json:"message"`
}

type runner struct {
	s       settings
	ctx     context.Context
	rec     *recorder
	http    *http.Client
	opts    *arm.ClientOptions
	vms     *armcompute.VirtualMachinesClient
	disks   *armcompute.DisksClient
	nics    *armnetwork.InterfacesClient
	steps   []step
	ticking sync.Mutex
}

func main() {
	var s settings
	flag.StringVar(&s.endpoint, "endpoint", "", "the face's ARM endpoint (https://127.0.0.1:port)")
	flag.StringVar(&s.caFile, "ca", "", "PEM file of the CA to trust for the endpoint")
	flag.StringVar(&s.subscription, "subscription", "", "subscription id")
	flag.StringVar(&s.group, "resource-group", "", "resource group")
	flag.StringVar(&s.location, "location", "eastus2", "location")
	flag.StringVar(&s.subnet, "subnet", "", "subnet id for NICs")
	flag.StringVar(&s.flow, "flow", "", "flow: reservation | lifecycle | absent | errors | allocation-failure | catalog")
	flag.StringVar(&s.gpuSize, "gpu-size", "Standard_ND96isr_H200_v5", "a size whose family has no quota")
	flag.StringVar(&s.size, "size", "Standard_D2s_v5", "a size with quota")
	flag.Float64Var(&s.tickSeconds, "tick-seconds", 30, "face clock seconds per tick while the SDK waits")
	flag.DurationVar(&s.tickEvery, "tick-every", 200*time.Millisecond, "wall time between ticks")
	flag.Parse()
	if s.endpoint == "" || s.caFile == "" || s.subscription == "" || s.group == "" || s.subnet == "" || s.flow == "" {
		fmt.Fprintln(os.Stderr, "go-arm-client: -endpoint, -ca, -subscription, -resource-group, -subnet and -flow are required")
		os.Exit(2)
	}
	r, err := newRunner(s)
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-arm-client:", err)
		os.Exit(2)
	}
	flows := map[string]func() error{"reservation": r.reservation, "lifecycle": r.lifecycle, "absent": r.absent, "errors": r.errorBodies, "allocation-failure": r.allocationFailure, "catalog": r.catalog}
	run, ok := flows[s.flow]
	if !ok {
		fmt.Fprintln(os.Stderr, "go-arm-client: unknown flow", s.flow)
		os.Exit(2)
	}
	flowErr := run()
	out := map[string]any{"flow": s.flow, "steps": r.steps, "http": r.rec.log}
	if flowErr != nil {
		out["fatal"] = flowErr.Error()
	}
	enc := json.NewEncoder(os.Stdout)
	enc.SetIndent("", " ")
	if err := enc.Encode(out); err != nil {
		os.Exit(1)
	}
	if flowErr != nil {
		os.Exit(1)
	}
}

func newRunner(s settings) (*runner, error) {
	pem, err := os.ReadFile(s.caFile)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, errors.New("no certificate in " + s.caFile)
	}
	rec := &recorder{base: &http.Transport{TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}}, start: time.Now()}
	client := &http.Client{Transport: rec}
	// A cloud whose Resource Manager is the face: the SDK builds every URL from this endpoint.
	fake := cloud.Configuration{
		ActiveDirectoryAuthorityHost: "https://login.microsoftonline.com/",
		Services: map[cloud.ServiceName]cloud.ServiceConfiguration{
			cloud.ResourceManager: {Audience: "https://management.core.windows.net/", Endpoint: s.endpoint},
		},
	}
	opts := &arm.ClientOptions{ClientOptions: policy.ClientOptions{Cloud: fake, Transport: client}}
	r := &runner{s: s, ctx: context.Background(), rec: rec, http: client, opts: opts}
	if r.vms, err = armcompute.NewVirtualMachinesClient(s.subscription, staticToken{}, opts); err != nil {
		return nil, err
	}
	if r.disks, err = armcompute.NewDisksClient(s.subscription, staticToken{}, opts); err != nil {
		return nil, err
	}
	if r.nics, err = armnetwork.NewInterfacesClient(s.subscription, staticToken{}, opts); err != nil {
		return nil, err
	}
	return r, nil
}

// ---------------------------------------------------------------- the face's sim routes

func (r *runner) sim(method, path string, body any) (map[string]any, error) {
	var rd io.Reader
	if body != nil {
		b, _ := json.Marshal(body)
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, r.s.endpoint+path, rd)
	if err != nil {
		return nil, err
	}
	req.Header.Set("content-type", "application/json")
	resp, err := r.http.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	out := map[string]any{}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	if resp.StatusCode != 200 {
		return nil, fmt.Errorf("%s %s: %d %v", method, path, resp.StatusCode, out)
	}
	return out, nil
}

// advance moves the face's clock and returns its time (ms).
func (r *runner) advance(seconds float64) int64 {
	r.ticking.Lock()
	defer r.ticking.Unlock()
	out, err := r.sim("POST", fmt.Sprintf("/_sim/clock/advance?seconds=%g", seconds), nil)
	if err != nil {
		fmt.Fprintln(os.Stderr, "go-arm-client: clock:", err)
		os.Exit(1)
	}
	return int64(out["t"].(float64))
}

func (r *runner) now() int64 { return r.advance(0) }

// whileWaiting runs f with the face's clock ticking, as real time passes while the SDK sleeps.
func (r *runner) whileWaiting(f func()) {
	done := make(chan struct{})
	stopped := make(chan struct{})
	go func() {
		defer close(stopped)
		t := time.NewTicker(r.s.tickEvery)
		defer t.Stop()
		for {
			select {
			case <-done:
				return
			case <-t.C:
				r.advance(r.s.tickSeconds)
			}
		}
	}()
	f()
	close(done)
	<-stopped
}

func (r *runner) fault(f map[string]any) error {
	_, err := r.sim("POST", "/_sim/faults", f)
	return err
}

// ---------------------------------------------------------------- steps

func (r *runner) record(name string, started time.Time, result map[string]any, err error) *step {
	st := step{Name: name, OK: err == nil, Result: result, WallMs: time.Since(started).Milliseconds(), SimT: r.now()}
	if err != nil {
		se := &stepError{Message: err.Error()}
		var re *azcore.ResponseError
		if errors.As(err, &re) {
			se.ResponseError = true
			se.ErrorCode = re.ErrorCode
			se.StatusCode = re.StatusCode
			if re.RawResponse != nil {
				if body, perr := runtime.Payload(re.RawResponse); perr == nil {
					var doc struct {
						Error struct{ Code, Message string } `json:"error"`
					}
					if json.Unmarshal(body, &doc) == nil {
						se.BodyCode, se.BodyMessage = doc.Error.Code, doc.Error.Message
					}
				}
			}
		}
		st.Error = se
	}
	r.steps = append(r.steps, st)
	return &r.steps[len(r.steps)-1]
}

func (r *runner) nicID(name string) string {
	return fmt.Sprintf("/subscriptions/%s/resourceGroups/%s/providers/Microsoft.Network/networkInterfaces/%s", r.s.subscription, r.s.group, name)
}

func (r *runner) createNic(name string) error {
	t := time.Now()
	var res map[string]any
	var err error
	r.whileWaiting(func() {
		var poller *runtime.Poller[armnetwork.InterfacesClientCreateOrUpdateResponse]
		poller, err = r.nics.BeginCreateOrUpdate(r.ctx, r.s.group, name, armnetwork.Interface{
			Location: to.Ptr(r.s.location),
			Properties: &armnetwork.InterfacePropertiesFormat{IPConfigurations: []*armnetwork.InterfaceIPConfiguration{{
				Name:       to.Ptr("ipconfig1"),
				Properties: &armnetwork.InterfaceIPConfigurationPropertiesFormat{Subnet: &armnetwork.Subnet{ID: to.Ptr(r.s.subnet)}},
			}}},
		}, nil)
		if err != nil {
			return
		}
		var done armnetwork.InterfacesClientCreateOrUpdateResponse
		done, err = poller.PollUntilDone(r.ctx, &runtime.PollUntilDoneOptions{Frequency: time.Second})
		if err == nil {
			ip := ""
			if cfgs := done.Properties.IPConfigurations; len(cfgs) > 0 && cfgs[0].Properties.PrivateIPAddress != nil {
				ip = *cfgs[0].Properties.PrivateIPAddress
			}
			res = map[string]any{"id": deref(done.ID), "name": deref(done.Name), "provisioningState": string(derefE(done.Properties.ProvisioningState)), "privateIp": ip}
		}
	})
	r.record("nic-create "+name, t, res, err)
	return err
}

func (r *runner) vmModel(name, size, nic string, zones []string) armcompute.VirtualMachine {
	vm := armcompute.VirtualMachine{
		Location: to.Ptr(r.s.location),
		Properties: &armcompute.VirtualMachineProperties{
			HardwareProfile: &armcompute.HardwareProfile{VMSize: to.Ptr(armcompute.VirtualMachineSizeTypes(size))},
			StorageProfile: &armcompute.StorageProfile{
				ImageReference: &armcompute.ImageReference{Publisher: to.Ptr("Canonical"), Offer: to.Ptr("ubuntu-24_04-lts"), SKU: to.Ptr("server"), Version: to.Ptr("latest")},
				OSDisk:         &armcompute.OSDisk{CreateOption: to.Ptr(armcompute.DiskCreateOptionTypesFromImage), DeleteOption: to.Ptr(armcompute.DiskDeleteOptionTypesDetach)},
			},
			OSProfile: &armcompute.OSProfile{
				ComputerName: to.Ptr(name), AdminUsername: to.Ptr("azureuser"),
				LinuxConfiguration: &armcompute.LinuxConfiguration{
					DisablePasswordAuthentication: to.Ptr(true),
					SSH:                           &armcompute.SSHConfiguration{PublicKeys: []*armcompute.SSHPublicKey{{Path: to.Ptr("/home/azureuser/.ssh/authorized_keys"), KeyData: to.Ptr("ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIGo go-sdk")}}},
				},
			},
			NetworkProfile: &armcompute.NetworkProfile{NetworkInterfaces: []*armcompute.NetworkInterfaceReference{{
				ID: to.Ptr(r.nicID(nic)), Properties: &armcompute.NetworkInterfaceReferenceProperties{Primary: to.Ptr(true), DeleteOption: to.Ptr(armcompute.DeleteOptionsDetach)},
			}}},
		},
	}
	for _, z := range zones {
		vm.Zones = append(vm.Zones, to.Ptr(z))
	}
	return vm
}

// createVM runs BeginCreateOrUpdate and, when accepted, PollUntilDone (the clock ticking).
func (r *runner) createVM(stepName, name, size, nic string) error {
	t := time.Now()
	var res map[string]any
	var err error
	r.whileWaiting(func() {
		var poller *runtime.Poller[armcompute.VirtualMachinesClientCreateOrUpdateResponse]
		poller, err = r.vms.BeginCreateOrUpdate(r.ctx, r.s.group, name, r.vmModel(name, size, nic, nil), nil)
		if err != nil {
			return
		}
		var done armcompute.VirtualMachinesClientCreateOrUpdateResponse
		done, err = poller.PollUntilDone(r.ctx, &runtime.PollUntilDoneOptions{Frequency: time.Second})
		if err == nil {
			res = vmResult(&done.VirtualMachine)
		}
	})
	r.record(stepName, t, res, err)
	return err
}

// createVMResumed starts the create, keeps only the poller's resume token (as a process that
// stops and starts again would), and finishes it from the token: the PUT is not sent again.
func (r *runner) createVMResumed(stepName, name, size, nic string) error {
	t := time.Now()
	var res map[string]any
	var err error
	r.whileWaiting(func() {
		var poller *runtime.Poller[armcompute.VirtualMachinesClientCreateOrUpdateResponse]
		if poller, err = r.vms.BeginCreateOrUpdate(r.ctx, r.s.group, name, r.vmModel(name, size, nic, nil), nil); err != nil {
			return
		}
		var token string
		if token, err = poller.ResumeToken(); err != nil {
			return
		}
		resumed, rerr := r.vms.BeginCreateOrUpdate(r.ctx, r.s.group, name, armcompute.VirtualMachine{}, &armcompute.VirtualMachinesClientBeginCreateOrUpdateOptions{ResumeToken: token})
		if err = rerr; err != nil {
			return
		}
		var done armcompute.VirtualMachinesClientCreateOrUpdateResponse
		if done, err = resumed.PollUntilDone(r.ctx, &runtime.PollUntilDoneOptions{Frequency: time.Second}); err == nil {
			res = vmResult(&done.VirtualMachine)
			res["resumed"] = true
		}
	})
	r.record(stepName, t, res, err)
	return err
}

func vmResult(vm *armcompute.VirtualMachine) map[string]any {
	out := map[string]any{"id": deref(vm.ID), "name": deref(vm.Name), "location": deref(vm.Location)}
	if vm.Properties != nil {
		out["provisioningState"] = deref(vm.Properties.ProvisioningState)
		if vm.Properties.HardwareProfile != nil {
			out["vmSize"] = string(derefE(vm.Properties.HardwareProfile.VMSize))
		}
		if sp := vm.Properties.StorageProfile; sp != nil && sp.OSDisk != nil {
			out["osDisk"] = deref(sp.OSDisk.Name)
		}
		if iv := vm.Properties.InstanceView; iv != nil {
			codes := []string{}
			for _, s := range iv.Statuses {
				codes = append(codes, str(s.Code))
			}
			out["statuses"] = codes
		}
	}
	return out
}

// awaitDelete runs one SDK delete to its end (the face's clock moving meanwhile) and records
// whether ARM answered it as done at once.
func awaitDelete[T any](r *runner, stepName string, begin func() (*runtime.Poller[T], error)) error {
	t := time.Now()
	var err error
	res := map[string]any{}
	r.whileWaiting(func() {
		var poller *runtime.Poller[T]
		poller, err = begin()
		if err != nil {
			return
		}
		res["doneAtOnce"] = poller.Done()
		_, err = poller.PollUntilDone(r.ctx, &runtime.PollUntilDoneOptions{Frequency: time.Second})
	})
	r.record(stepName, t, res, err)
	return err
}

func (r *runner) deleteNic(stepName, name string) error {
	return awaitDelete(r, stepName, func() (*runtime.Poller[armnetwork.InterfacesClientDeleteResponse], error) {
		return r.nics.BeginDelete(r.ctx, r.s.group, name, nil)
	})
}

// deleteNicNow is one DELETE with the clock stopped (the reservation check).
func (r *runner) deleteNicNow(stepName, name string) {
	t := time.Now()
	poller, err := r.nics.BeginDelete(r.ctx, r.s.group, name, nil)
	res := map[string]any{}
	if err == nil {
		res["doneAtOnce"] = poller.Done()
	}
	r.record(stepName, t, res, err)
}

func (r *runner) deleteVM(stepName, name string) error {
	return awaitDelete(r, stepName, func() (*runtime.Poller[armcompute.VirtualMachinesClientDeleteResponse], error) {
		return r.vms.BeginDelete(r.ctx, r.s.group, name, nil)
	})
}

func (r *runner) deleteDisk(stepName, name string) error {
	return awaitDelete(r, stepName, func() (*runtime.Poller[armcompute.DisksClientDeleteResponse], error) {
		return r.disks.BeginDelete(r.ctx, r.s.group, name, nil)
	})
}

// ---------------------------------------------------------------- flows

// reservation: a NIC, a VM PUT on it refused for quota, the NIC refused to deletes for 180 s of the face's clock.
func (r *runner) reservation() error {
	if err := r.createNic("res-nic"); err != nil {
		return err
	}
	if err := r.createVM("vm-create-over-quota", "res-vm", r.s.gpuSize, "res-nic"); err == nil {
		return errors.New("the over-quota VM create succeeded")
	}
	t := time.Now()
	_, err := r.vms.Get(r.ctx, r.s.group, "res-vm", nil)
	r.record("vm-get-after-refusal", t, nil, err)
	r.deleteNicNow("nic-delete-at-0s", "res-nic")
	r.advance(170)
	r.deleteNicNow("nic-delete-at-170s", "res-nic")
	r.advance(9)
	r.deleteNicNow("nic-delete-at-179s", "res-nic")
	r.advance(1)
	if err := r.deleteNic("nic-delete-at-180s", "res-nic"); err != nil {
		return err
	}
	t = time.Now()
	_, err = r.nics.Get(r.ctx, r.s.group, "res-nic", nil)
	r.record("nic-get-after-delete", t, nil, err)
	return nil
}

// lifecycle: VMs created through the LRO, read, listed page by page, deleted, their disks deleted.
func (r *runner) lifecycle() error {
	names := []string{"life-a", "life-b", "life-c"}
	for _, n := range names {
		if err := r.createNic(n + "-nic"); err != nil {
			return err
		}
		create := r.createVM
		if n == "life-c" {
			create = r.createVMResumed
		}
		if err := create("vm-create "+n, n, r.s.size, n+"-nic"); err != nil {
			return err
		}
	}
	t := time.Now()
	got, err := r.vms.Get(r.ctx, r.s.group, "life-a", nil)
	var res map[string]any
	if err == nil {
		res = vmResult(&got.VirtualMachine)
	}
	r.record("vm-get", t, res, err)
	t = time.Now()
	got, err = r.vms.Get(r.ctx, r.s.group, "life-a", &armcompute.VirtualMachinesClientGetOptions{Expand: to.Ptr(armcompute.InstanceViewTypesInstanceView)})
	res = nil
	if err == nil {
		res = vmResult(&got.VirtualMachine)
	}
	r.record("vm-get-instance-view", t, res, err)

	t = time.Now()
	pages, listed := 0, []string{}
	pager := r.vms.NewListPager(r.s.group, nil)
	for err = nil; pager.More(); {
		var page armcompute.VirtualMachinesClientListResponse
		if page, err = pager.NextPage(r.ctx); err != nil {
			break
		}
		pages++
		for _, v := range page.Value {
			listed = append(listed, str(v.Name))
		}
	}
	r.record("vm-list-pager", t, map[string]any{"pages": pages, "names": listed}, err)

	t = time.Now()
	pages, listed = 0, []string{}
	nicPager := r.nics.NewListPager(r.s.group, nil)
	for err = nil; nicPager.More(); {
		var page armnetwork.InterfacesClientListResponse
		if page, err = nicPager.NextPage(r.ctx); err != nil {
			break
		}
		pages++
		for _, v := range page.Value {
			listed = append(listed, str(v.Name))
		}
	}
	r.record("nic-list-pager", t, map[string]any{"pages": pages, "names": listed}, err)

	for _, n := range names {
		if err := r.deleteVM("vm-delete "+n, n); err != nil {
			return err
		}
	}
	// The OS disks were created with deleteOption Detach (Azure's default): they outlive the VMs.
	t = time.Now()
	disk, err := r.disks.Get(r.ctx, r.s.group, "life-a_OsDisk_1", nil)
	res = nil
	if err == nil {
		res = map[string]any{"name": deref(disk.Name), "diskState": string(derefE(disk.Properties.DiskState))}
	}
	r.record("disk-get", t, res, err)
	for _, n := range names {
		if err := r.deleteDisk("disk-delete "+n, n+"_OsDisk_1"); err != nil {
			return err
		}
		if err := r.deleteNic("nic-delete "+n, n+"-nic"); err != nil {
			return err
		}
	}
	t = time.Now()
	_, err = r.disks.Get(r.ctx, r.s.group, "life-a_OsDisk_1", nil)
	r.record("disk-get-after-delete", t, nil, err)
	return nil
}

// allocationFailure: a VM create accepted, then failed in allocation (the face's capacity set so),
// as the SDK's poller reports it; the Failed VM record holds its NIC until deleted.
func (r *runner) allocationFailure() error {
	if err := r.createNic("af-nic"); err != nil {
		return err
	}
	if err := r.createVM("vm-create-allocation-failed", "af-vm", r.s.size, "af-nic"); err == nil {
		return errors.New("the VM create succeeded in a region without capacity")
	}
	t := time.Now()
	got, err := r.vms.Get(r.ctx, r.s.group, "af-vm", &armcompute.VirtualMachinesClientGetOptions{Expand: to.Ptr(armcompute.InstanceViewTypesInstanceView)})
	var res map[string]any
	if err == nil {
		res = vmResult(&got.VirtualMachine)
	}
	r.record("vm-get-failed", t, res, err)
	r.deleteNicNow("nic-delete-attached", "af-nic")
	if err := r.deleteVM("vm-delete-failed", "af-vm"); err != nil {
		return err
	}
	r.advance(180)
	return r.deleteNic("nic-delete-after-vm", "af-nic")
}

// catalog: what a provider reads before it launches anything: Resource SKUs of the location,
// the location's quota usages and VM sizes, each through the SDK's pager.
func (r *runner) catalog() error {
	skus, err := armcompute.NewResourceSKUsClient(r.s.subscription, staticToken{}, r.opts)
	if err != nil {
		return err
	}
	t := time.Now()
	count, vms := 0, map[string]any{}
	pager := skus.NewListPager(&armcompute.ResourceSKUsClientListOptions{Filter: to.Ptr(fmt.Sprintf("location eq '%s'", r.s.location))})
	for err = nil; pager.More(); {
		var page armcompute.ResourceSKUsClientListResponse
		if page, err = pager.NextPage(r.ctx); err != nil {
			break
		}
		for _, sku := range page.Value {
			count++
			if str(sku.ResourceType) != "virtualMachines" {
				continue
			}
			caps := map[string]string{}
			for _, c := range sku.Capabilities {
				caps[str(c.Name)] = str(c.Value)
			}
			zones := []string{}
			for _, li := range sku.LocationInfo {
				for _, z := range li.Zones {
					zones = append(zones, str(z))
				}
			}
			restrictions := []string{}
			for _, rs := range sku.Restrictions {
				restrictions = append(restrictions, string(derefE(rs.Type))+"/"+string(derefE(rs.ReasonCode)))
			}
			vms[str(sku.Name)] = map[string]any{"family": str(sku.Family), "vCPUs": caps["vCPUs"], "gpus": caps["GPUs"], "memoryGB": caps["MemoryGB"], "zones": zones, "restrictions": restrictions, "locations": len(sku.Locations)}
		}
	}
	r.record("resource-skus", t, map[string]any{"count": count, "vms": vms}, err)

	usage, err := armcompute.NewUsageClient(r.s.subscription, staticToken{}, r.opts)
	if err != nil {
		return err
	}
	t = time.Now()
	usages := map[string]any{}
	up := usage.NewListPager(r.s.location, nil)
	for err = nil; up.More(); {
		var page armcompute.UsageClientListResponse
		if page, err = up.NextPage(r.ctx); err != nil {
			break
		}
		for _, u := range page.Value {
			usages[str(u.Name.Value)] = map[string]any{"current": deref(u.CurrentValue), "limit": deref(u.Limit), "unit": deref(u.Unit), "localized": str(u.Name.LocalizedValue)}
		}
	}
	r.record("usages", t, usages, err)

	sizes, err := armcompute.NewVirtualMachineSizesClient(r.s.subscription, staticToken{}, r.opts)
	if err != nil {
		return err
	}
	t = time.Now()
	names := []string{}
	sp := sizes.NewListPager(r.s.location, nil)
	for err = nil; sp.More(); {
		var page armcompute.VirtualMachineSizesClientListResponse
		if page, err = sp.NextPage(r.ctx); err != nil {
			break
		}
		for _, v := range page.Value {
			names = append(names, str(v.Name))
		}
	}
	r.record("vm-sizes", t, map[string]any{"names": names}, err)
	return nil
}

// absent: deletes and reads of resources that do not exist, and of a resource group that does not.
func (r *runner) absent() error {
	_ = r.deleteVM("vm-delete-absent", "never-vm")
	_ = r.deleteNic("nic-delete-absent", "never-nic")
	_ = r.deleteDisk("disk-delete-absent", "never-disk")
	t := time.Now()
	_, err := r.vms.Get(r.ctx, r.s.group, "never-vm", nil)
	r.record("vm-get-absent", t, nil, err)
	t = time.Now()
	_, err = r.nics.Get(r.ctx, r.s.group, "never-nic", nil)
	r.record("nic-get-absent", t, nil, err)
	t = time.Now()
	_, err = r.disks.Get(r.ctx, r.s.group, "never-disk", nil)
	r.record("disk-get-absent", t, nil, err)
	t = time.Now()
	_, err = r.vms.BeginDelete(r.ctx, "no-such-group", "never-vm", nil)
	r.record("vm-delete-in-absent-group", t, nil, err)
	t = time.Now()
	_, err = r.nics.BeginDelete(r.ctx, "no-such-group", "never-nic", nil)
	r.record("nic-delete-in-absent-group", t, nil, err)
	return nil
}

// errorBodies: 400, 404, 409 and 429 through the SDK, with its default retry policy for the 429s.
func (r *runner) errorBodies() error {
	t := time.Now()
	_, err := r.nics.BeginCreateOrUpdate(r.ctx, r.s.group, "bad-nic", armnetwork.Interface{
		Properties: &armnetwork.InterfacePropertiesFormat{IPConfigurations: []*armnetwork.InterfaceIPConfiguration{{
			Name: to.Ptr("ipconfig1"), Properties: &armnetwork.InterfaceIPConfigurationPropertiesFormat{Subnet: &armnetwork.Subnet{ID: to.Ptr(r.s.subnet)}},
		}}},
	}, nil)
	r.record("400 nic-put-without-location", t, nil, err)
	t = time.Now()
	_, err = r.vms.Get(r.ctx, r.s.group, "never-vm", nil)
	r.record("404 vm-get-absent", t, nil, err)
	if err := r.createNic("err-nic"); err != nil {
		return err
	}
	_ = r.createVM("409 vm-create-over-quota", "err-vm", r.s.gpuSize, "err-nic")

	// ARM's write bucket, drained: the SDK retries after Retry-After (3 retries by default), the clock stopped, then gives up.
	if err := r.fault(map[string]any{"kind": "throttle", "bucket": "writes", "drain": true}); err != nil {
		return err
	}
	t = time.Now()
	_, err = r.nics.BeginCreateOrUpdate(r.ctx, r.s.group, "throttled-nic", r.nicModel(), nil)
	r.record("429 nic-put-throttled", t, nil, err)
	// The same with the clock running: a retry after Retry-After finds a token.
	if err := r.createNic("throttled-nic"); err != nil {
		return err
	}
	// Compute's own policy: a Retry-After beyond the SDK's MaxRetryDelay (60 s) is not retried.
	// The earlier VM PUT ages out of the windows first, so the fault's calls alone fill them
	// and the wait is the 3-minute window's full length.
	r.advance(1800)
	if err := r.fault(map[string]any{"kind": "computeThrottle", "location": r.s.location}); err != nil {
		return err
	}
	t = time.Now()
	_, err = r.vms.BeginCreateOrUpdate(r.ctx, r.s.group, "throttled-vm", r.vmModel("throttled-vm", r.s.size, "throttled-nic", nil), nil)
	r.record("429 vm-put-compute-throttled", t, nil, err)
	return nil
}

func (r *runner) nicModel() armnetwork.Interface {
	return armnetwork.Interface{
		Location: to.Ptr(r.s.location),
		Properties: &armnetwork.InterfacePropertiesFormat{IPConfigurations: []*armnetwork.InterfaceIPConfiguration{{
			Name: to.Ptr("ipconfig1"), Properties: &armnetwork.InterfaceIPConfigurationPropertiesFormat{Subnet: &armnetwork.Subnet{ID: to.Ptr(r.s.subnet)}},
		}}},
	}
}

func deref[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func str(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func derefE[T ~string](p *T) T {
	if p == nil {
		return ""
	}
	return *p
}
